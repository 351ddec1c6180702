/**
 * A tool's own destroy verb on a named durable resource, with its confirmation turned off, for ANY
 * program: `<cli> [noun[:sub]…] delete|destroy|rm|remove|purge|drop|wipe|erase|nuke|obliterate|
 * unregister|terminate|deprovision|teardown … --force|--yes|--confirm|--cascade|-auto-approve…`
 * (hosting and database services, warehouses, queues, version-control servers, secret stores). The
 * prompt such a tool shows is its last safeguard; an assistant that turns it off destroys what the
 * tool was asking about.
 *
 * Not this rule's: tools whose destroy verbs other rules judge with more knowledge (the filesystem,
 * git, containers, Kubernetes, Terraform, the cloud and storage CLIs, SQL clients, Perforce and Plastic), package and
 * environment managers removing what they installed (npm, pip, brew, apt, conda env remove…),
 * ephemeral things (containers, pods, images, caches, sessions, preview deployments and branches) and
 * targets named as throwaway (dev, test, tmp, scratch, sandbox, preview, demo, local, kind-, minikube),
 * and paths (build output is deleted by path, and paths are judged as deletes).
 */
import { storeScope } from './sql-rules';

const VERB = /^(delete|destroy|rm|remove|obliterate|nuke|purge|drop|wipe|erase|unregister|terminate|deprovision|teardown|tear-down|delete-all|destroy-all|remove-all|purge-all)$/i;
/** Flags that answer the tool's prompt in advance. */
const NO_PROMPT = /^(--force|-f|--yes|-y|--confirm(=.*)?|--cascade|-recurse|--recurse|-skipTrash|-auto-approve|--auto-approve|--quiet|-q|--no-prompt|--non-interactive|--noinput|--no-input|--assume-yes|--force-delete|--permanent|--permanently|--hard|--no-confirm|--yes-i-really-mean-it|--really|--i-am-sure|-Force|-Confirm:\$false|--?skip[-_]confirm(ation)?(=true)?|--force[-_]yes|skip_confirmation:true|force:true)$/i;
/** Verbs that say the destruction is total and meant: no prompt needs to be turned off (fastlane match nuke, p4 obliterate). */
const TOTAL = /^(nuke|obliterate)$/i;
/**
 * Programs judged elsewhere or that only remove what they installed: the filesystem and git, containers
 * and clusters, infrastructure and cloud CLIs with their own tables, SQL and store clients, package,
 * language and environment managers, editors' extensions, local VMs and simulators.
 */
const OTHERS = /^(rm|rmdir|unlink|shred|find|fd|xargs|git|trash|trash-put|gio|docker|podman|nerdctl|ctr|crictl|kubectl|oc|helm|kind|minikube|k3d|k3s|microk8s|terraform|tofu|terragrunt|pulumi|aws|gcloud|gsutil|az|s3cmd|s5cmd|rclone|mc|azcopy|b2|psql|mysql|mariadb|sqlite3|mongosh|mongo|redis-cli|bq|snowsql|dbt|hdfs|hadoop|databricks|rpk|npm|npx|pnpm|yarn|bun|pip|pip3|pipx|uv|poetry|pdm|conda|mamba|micromamba|brew|port|apt|apt-get|aptitude|dpkg|dnf|yum|rpm|zypper|pacman|apk|snap|flatpak|nix|nix-env|cargo|rustup|go|gem|bundle|composer|cpan|cpanm|opam|cabal|stack|mix|dotnet|nuget|choco|winget|scoop|sdk|asdf|mise|rtx|nvm|fnm|volta|pyenv|rbenv|jenv|goenv|tfenv|code|codium|cursor|jupyter|vagrant|multipass|virsh|VBoxManage|xcrun|simctl|avdmanager|sdkmanager|emulator|adb|fastboot|flutter|pod|ansible-galaxy|vscode|systemctl|launchctl|ssh-keygen|ssh-add|gpg|security|keytool|certutil|openssl|ipfs|make|cmake|bazel|gradle|mvn|ant|ninja|meson|sudo|env|nice|timeout|p4|cm)$/;
/** Nouns of things that are made again at will or live briefly, and single entries inside a store (a key, a record, a secret). */
const EPHEMERAL = /^(containers?|pods?|images?|caches?|channels?|cache-entries|sessions?|tokens?|previews?|preview-deployments?|branch(es)?|deployments?|builds?|runs?|logs?|artifacts?|tmp|temp|locks?|leases?|alias(es)?|invitations?|kernelspecs?|envs?|venvs?|jobs?|tasks?|spans?|traces?|notifications?|keys?|records?|entry|entries|items?|objects?|messages?|values?|rows?|documents?|secrets?|variables?|vars?)$/i;
/** Targets named as short-lived (beyond storeScope's throwaway words). */
// (A deployment's own URL, acme-web-git-feat-x-acme.vercel.app, is one deployment of many, not the project.)
const SHORT_LIVED = /(^|[^a-z0-9])(preview|demo|review|ephemeral|pr-?\d+|kind|minikube|feature|cache|example|sample)([^a-z0-9]|$)|\.vercel\.app$|--[\w-]+\.netlify\.app$/i;

/** The destroy verb of an argv, with the target words after it, or null. */
function destroyVerb(argv: string[]): { verb: string; targets: string[] } | null {
  const words = argv.slice(1, 8);
  // <cli> [noun[:sub]…] VERB: the verb among the first few words that are not options (noun:verb too, apps:destroy).
  let seen = 0;
  for (let k = 0; k < words.length && seen < 4; k++) {
    const w = words[k];
    if (w.startsWith('-')) continue;
    seen++;
    // apps:destroy (heroku), match_nuke (a fastlane action run by name).
    const verb = /[:_]/.test(w) ? w.slice(Math.max(w.lastIndexOf(':'), w.lastIndexOf('_')) + 1) : w;
    if (!VERB.test(verb) && !TOTAL.test(verb)) continue;
    const nouns = [...words.slice(0, k).filter((x) => !x.startsWith('-')), ...(/[:_]/.test(w) ? w.split(/[:_]/).slice(0, -1) : [])];
    if (!TOTAL.test(verb) && nouns.some((n) => EPHEMERAL.test(n))) return null;
    return { verb: TOTAL.test(verb) ? verb : w, targets: argv.slice(k + 2) };
  }
  return null;
}

/**
 * Why the invocation destroys a named durable resource past its prompt, or null. `confirmed`: its
 * stdin answers yes (yes |, echo y |).
 */
export function destroyFinding(argv0: string[], confirmed: boolean): string | null {
  // bundle exec fastlane …, npx supabase …, poetry run x …: the tool the runner starts.
  const runner = /^(bundle|poetry|pipenv|uv|pnpm|yarn|npm|pdm|hatch|rye)$/.test(argv0[0] ?? '') && /^(exec|run|x)$/.test(argv0[1] ?? '') ? 2 : /^(npx|bunx|pnpx)$/.test(argv0[0] ?? '') ? 1 : 0;
  const argv = argv0.slice(runner).filter((a, k) => !(runner > 0 && k === 0 && a.startsWith('-')));
  const name = argv[0];
  if (name === undefined || OTHERS.test(name) || /^(python|node|ruby|perl|php|bash|sh|zsh)/.test(name)) return null;
  const total = argv.slice(1, 6).some((a) => TOTAL.test(a.slice(Math.max(a.lastIndexOf(':'), a.lastIndexOf('_')) + 1)));
  const flag = argv.find((a) => NO_PROMPT.test(a)) ?? (confirmed ? 'yes |' : total ? 'a verb that asks nothing' : undefined);
  if (flag === undefined || argv.some((a) => /^--(dry-?run|dryrun|what-?if|plan|preview)(=true)?$|^-n$/i.test(a))) return null;
  const d = destroyVerb(argv);
  if (d === null) return null;
  // firejail --quiet rm -rf build, faketime … rm -f x: a wrapper running rm, judged as that rm (rm's own flags, or the flag before the verb).
  if (/^(rm|rmdir|unlink|shred)$/.test(d.verb) && (d.targets.some((t) => /^-[rRfvidI]+$/.test(t)) || argv.indexOf(flag) < argv.indexOf(d.verb))) return null;
  // A named target: a word after the verb that is not a flag (an option's value counts: --app NAME).
  const named = d.targets.filter((t) => !t.startsWith('-') || /^--[\w-]+=./.test(t)).map((t) => t.replace(/^--[\w-]+=/, ''));
  if (named.length === 0 && !(total && d.targets.length === 0 && argv.length > 2)) return null;
  // Paths are deletes of files, judged as such (build output, caches).
  if (named.every((t) => /^(\.{1,2}\/|~|\/(?!\/))/.test(t) || /\.(json|ya?ml|toml|txt|lock|log)$/.test(t))) return null;
  // (A total verb, match nuke development, names a kind of thing, not a throwaway target.)
  if (!total && (storeScope(named) === 'throwaway' || named.some((t) => SHORT_LIVED.test(t)))) return null;
  return `${argv.slice(0, 3).join(' ')} destroys ${named.slice(0, 2).join(' ')} with the tool's confirmation turned off (${flag}): what it held is gone for good`;
}

/**
 * A connected phone or tablet wiped: `adb shell rm -r` of the user's storage (/sdcard, /storage/emulated/0,
 * /data/media) or of /, `fastboot erase|format userdata` or `fastboot -w`. The photos, files and app data
 * on the device are gone; what the device runs is not the host's, so the host's delete rules do not see it.
 */
export function deviceWipe(argv: string[]): string | null {
  const [name, ...args] = argv;
  if (name === 'fastboot' && (args.includes('-w') || (/^(erase|format(:\w+)?)$/.test(args.find((a) => !a.startsWith('-')) ?? '') && args.some((a) => /^(userdata|data|metadata|cache|super)$/.test(a))))) return `fastboot ${args.join(' ')} wipes the device's user data: its photos, files and apps`;
  if (name !== 'adb') return null;
  const sh = args.indexOf('shell');
  if (sh < 0) return null;
  const line = args.slice(sh + 1).join(' ');
  const m = /(?:^|[;&|]\s*|su\s+\S+\s+|run-as\s+\S+\s+)rm\s+((?:-\S+\s+)*)([^;&|]+)/.exec(line);
  if (!m || !/-[a-zA-Z]*[rR]/.test(m[1])) return null;
  const hit = m[2].trim().split(/\s+/).find((p) => /^\/(sdcard|storage\/(emulated\/0|self\/primary)|data\/media(\/0)?|data\/data|data)?\/?(\*|[^/]+\/?\*?)?$/.test(p.replace(/^['"]|['"]$/g, '')));
  return hit ? `adb shell rm -r ${hit} deletes the device's own files (photos, downloads, app data)` : null;
}
