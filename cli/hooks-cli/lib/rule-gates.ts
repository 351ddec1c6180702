/**
 * The cheap checks that decide whether the deep analysis needs a rule family at all, and the lazy loaders of
 * those families. A family listed in build-hooks.ts RULE_STAGES is a bundle of its own with its own code cache,
 * loaded on its first use: a line that never needs it (`rm -rf build`, `git push origin feature`) neither reads
 * nor runs it. command-rules.ts calls a family's function only when its gate here says the function could answer
 * anything but its "nothing" (null, [], the text unchanged).
 *
 * A gate must be exact on its "no": each one is the test the function itself starts with (or a looser one),
 * kept here, in the analysis's core, so that asking it loads nothing. The functions still make their own test.
 * Every gate's name starts with `may`: the build without the split (build-hooks.ts, `split: false`) opens them
 * all, calling every family's function on every line as before the split, to compare answers with.
 * test/hooks-cli/rule-gates.test.ts runs every gated function on every corpus line's invocations the gate
 * refuses and checks that none answers anything; bundle-equivalence.test.ts checks that the split bundle
 * answers every corpus command as the unsplit one.
 */
import type * as FrameworkRules from './framework-rules';
import type * as WindowsRules from './windows-rules';

let windowsRules: typeof WindowsRules | undefined;
let frameworkRules: typeof FrameworkRules | undefined;
/** windows-rules.ts, required on first use (in the hook: its own stage). */
export const windows = (): typeof WindowsRules => (windowsRules ??= require('./windows-rules') as typeof WindowsRules);
/** framework-rules.ts, required on first use (in the hook: its own stage). */
export const framework = (): typeof FrameworkRules => (frameworkRules ??= require('./framework-rules') as typeof FrameworkRules);

// --- windows-rules.ts

/** windowsProgram(words): null unless the first word is `py`, or a file ending .exe/.com/.cmd/.bat, or a path to `py`. */
export const mayBeWindowsProgram = (first: string): boolean => first === 'py' || (first.includes('.') && /(^|[\\/])py$|\.(exe|com|cmd|bat)$/i.test(first));

/** windowsAsSh(argv): null unless the program is certutil, bitsadmin or robocopy. */
export const mayBeWindowsAsSh = (argv: string[]): boolean => /^(certutil|bitsadmin|robocopy)$/i.test(argv[0] ?? '');

/**
 * The Windows tools windowsFindings judges (its first test; the program's own name, lower-cased). Word lists are
 * tested as literals, which the build makes Set lookups (name-tests.ts); an exported expression would be compiled.
 */
export const isWindowsTool = (name: string): boolean => /^(sc|new-service|mshta|regsvr32|rundll32|set-mppreference|add-mppreference|netsh|reg|schtasks|register-scheduledtask|unregister-scheduledtask|vssadmin|wmic|wbadmin|bcdedit|format|diskpart|format-volume|clear-disk|remove-partition|initialize-disk|set-disk|remove-physicaldisk|cipher|icacls|takeown|cacls)$/.test(name);

/** windowsFindings(argv): no finding unless the program is one of the Windows tools. */
export const mayHaveWindowsFindings = (argv: string[]): boolean => isWindowsTool((argv[0] ?? '').toLowerCase());

/** windowsCommandLine(line): the line unchanged unless it starts with cmd, powershell or pwsh. */
export const mayLaunchWindowsShell = (line: string): boolean => /^\s*(?:\S*[\\/])?(cmd|powershell|pwsh)(\.exe)?\s/i.test(line);

// --- framework-rules.ts

/** The program's name without its folder. */
const frameworkTool = (argv: string[]): string => (argv[0] ?? '').split('/').pop() ?? '';

/** frameworkCode, frameworkFindings, frameworkSecretPrinter(argv): nothing unless a framework's program (the argv's first word, without its folder) or php. */
export const mayBeFramework = (argv: string[]): boolean => /^(artisan|sail|wp|rails|rake|bundle|drush|cap|heroku)$/.test(frameworkTool(argv)) || argv[0] === 'php';

/** devContainerCommand(argv): null unless sail (or a path to it), ddev, lando, docker or podman compose, or *-compose. */
export const mayBeDevContainer = (argv: string[]): boolean =>
  /^(sail|ddev|lando|docker-compose|podman-compose)$/.test(argv[0] ?? '') || (argv[0] ?? '').endsWith('/sail') || ((argv[0] === 'docker' || argv[0] === 'podman') && argv[1] === 'compose');

/** remoteWipeFindings(argv): no finding unless rsync with a --delete option, or lftp. */
export const mayWipeRemote = (argv: string[]): boolean => (argv[0] === 'rsync' && argv.some((a, k) => k > 0 && a.startsWith('--delete'))) || argv[0] === 'lftp';
