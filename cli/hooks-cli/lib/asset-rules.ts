/**
 * Game and content-creation tools: the Python that DCC applications and game editors run headless,
 * and the stores and platform credentials of a studio.
 *
 * - Hosted Python: Blender (`--python-expr CODE`, `-P /dev/stdin`), the Unreal editor
 *   (`-ExecutePythonScript=CODE`, `-run=pythonscript -script=CODE`), GIMP's python-fu batch, FreeCAD's
 *   `-c`: the same code a `python3 -c` would run, judged as such (command-rules.ts collects it as one).
 *   Houdini's hython, Maya's mayapy and their kin are Python interpreters by name (inline-code.ts langOf).
 * - Platform credentials in variables (STEAM_BUILD_PASSWORD, BUTLER_API_KEY…) and the hosts they are
 *   meant for: sent elsewhere they are leaked.
 *
 * Pure functions over argv; command-rules.ts calls them for the programs mayMatch() names.
 */

import { SHARED_MOUNT } from './paths-classify';

/** Cheap gate: the programs and words this module's rules need. */
export function mayMatch(line: string): boolean {
  return line.includes('blender') || line.includes('Editor') || line.includes('gimp') || line.includes('reecad') || line.includes('FreeCAD');
}

/** Python a DCC application or game editor runs: the code (inline or read on stdin), or null when it runs none we can see. */
export function hostedPython(argv: string[]): { code: string | null; readsStdin: boolean } | null {
  const name = (argv[0] ?? '').replace(/^.*[\\/]/, '').replace(/\.exe$/i, '');
  const args = argv.slice(1);
  const isStdin = (f: string | undefined) => f !== undefined && /^(-|\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0)$/.test(f);
  const valueOf = (opts: RegExp): string | undefined => {
    for (let k = 0; k < args.length; k++) {
      const m = /^(-{1,2}[\w-]+)=(.*)$/s.exec(args[k]);
      if (m && opts.test(m[1])) return m[2];
      if (opts.test(args[k]) && k + 1 < args.length) return args[k + 1];
    }
    return undefined;
  };
  if (/^blender(-\d[\d.]*)?$/i.test(name)) {
    const expr = valueOf(/^--python-expr$/);
    if (expr !== undefined) return { code: expr, readsStdin: false };
    const file = valueOf(/^(-P|--python)$/);
    return isStdin(file) ? { code: null, readsStdin: true } : null;
  }
  // UnrealEditor-Cmd, UE4Editor-Cmd, UnrealEditor: a script argument that is code (not a .py file) is run as Python.
  if (/^(UnrealEditor|UE4Editor|UE5Editor)(-Cmd)?$/i.test(name)) {
    // -ExecCmds="py CODE": the editor's console command that runs one line of Python.
    const execCmds = /^\s*py\s+(.+)$/s.exec(valueOf(/^-ExecCmds$/i) ?? '')?.[1];
    const script = execCmds ?? valueOf(/^-ExecutePythonScript$/i) ?? (args.some((a) => /^-run=pythonscript$/i.test(a)) ? valueOf(/^-script$/i) : undefined);
    if (script === undefined || /^\S+\.py$/i.test(script.trim())) return null;
    return { code: script, readsStdin: false };
  }
  // gimp -i --batch-interpreter=python-fu-eval -b CODE.
  if (/^gimp(-console)?(-[\d.]+)?$/i.test(name) && args.some((a) => /python-fu-eval/.test(a))) {
    const code = valueOf(/^(-b|--batch)$/);
    return code !== undefined && code !== '-' ? { code, readsStdin: false } : { code: null, readsStdin: code === '-' };
  }
  // freecadcmd -c CODE.
  if (/^freecad(cmd)?$/i.test(name)) {
    const code = valueOf(/^(-c|--run-python)$/);
    return code !== undefined ? { code, readsStdin: false } : null;
  }
  return null;
}

/**
 * Game platforms' credentials in variables, and the hosts they are meant for (as VAR_HOSTS in
 * command-rules.ts): a Steam build password sent to another portal is leaked.
 */
const SECRET_PART = String.raw`\w*(TOKEN|SECRET|PASSWORD|PASSWD|PASS|API_?KEY|KEY|CREDENTIALS?)\w*`;
export const GAME_VAR_HOSTS: [RegExp, RegExp][] = [
  [new RegExp(`^STEAM_${SECRET_PART}$`), /(^|\.)(steampowered|steamcommunity|steamgames|steamstatic|steamcontent|steam-api|valvesoftware)\.com$|^localhost$/],
  [new RegExp(`^(ITCH|BUTLER|ITCHIO)_${SECRET_PART}$`), /(^|\.)itch\.(io|zone|ovh)$|^localhost$/],
  [new RegExp(`^(EPIC|EOS)_${SECRET_PART}$`), /(^|\.)(epicgames|unrealengine|epicgames\.dev)\.(com|dev)$|^localhost$/],
  [new RegExp(`^(PLAYFAB)_${SECRET_PART}$`), /(^|\.)playfab(api)?\.com$|^localhost$/],
  [new RegExp(`^(GOG)_${SECRET_PART}$`), /(^|\.)gog(\.com|galaxy\.com)$|^localhost$/],
  [new RegExp(`^(UNITY)_${SECRET_PART}$`), /(^|\.)unity(3d)?\.com$|^localhost$/],
  [new RegExp(`^(DISCORD)_${SECRET_PART}$`), /(^|\.)discord(app)?\.com$|^localhost$/],
];

/** Folder names that say they hold source material: raw and source art, masters, originals, recordings, scans. */
const SOURCE_MATERIAL = /^(raw|raws|raw[-_ ]?(assets|art|files|data|footage|audio)|source[-_ ]?(art|assets|files|content|audio|footage)|sources?|masters?|originals?|art|artwork|assets|footage|recordings|textures|scans|mocap|captures|sculpts|concept[-_ ]?art)$/i;

/**
 * A whole folder of source material (RawAssets, SourceArt, Masters, Footage…) deleted on a shared or
 * removable disk (a studio's art NAS at /mnt/NAME, /Volumes/NAME, /media/…): the artists' originals,
 * which a game's build is made from and nothing rebuilds. Returns what is lost, or null.
 */
export function sourceAssetLoss(abs: string): string | null {
  if (!SHARED_MOUNT.test(abs) && !/^\/(Volumes|media|run\/media\/[^/]+)\/[^/]+\//.test(abs)) return null;
  const name = abs.slice(abs.lastIndexOf('/') + 1);
  return SOURCE_MATERIAL.test(name) && abs.split('/').length > 3 ? `${abs}, a folder of source material (originals that no build makes again) on a shared disk` : null;
}
