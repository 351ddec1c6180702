/**
 * Loads a hook's second stage, `hooks/lib/<name>.js` (build-hooks.ts,
 * STAGES), as the loader loads a hook: compiled through vm.Script with V8's
 * code cache `hooks/lib/<name>.cache`, which holds what the stage's own runs
 * compiled (a cache shared with the first stage would hold either stage's
 * functions depending on which ran first). The stage's modules that the
 * first stage also has are the first stage's instances: one store, one set
 * of notices and lock settings per run.
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { warmingUp } from './hook-runtime';

export interface Stage<T> {
  exports: T;
  /** Writes the code cache when there was none or V8 rejected it; call after the stage's work, so its functions are in it. */
  saveCache(): void;
}

/** The function a stage bundle is: the loader's arguments, and the host that lends it the first stage's modules. */
type StageFunction = (req: (spec: string) => unknown, filename: string, proc: NodeJS.Process, st: typeof setTimeout, ct: typeof clearTimeout, host: { load(id: string): unknown; exports: unknown }) => void;

export function loadStage<T>(hookFile: string, name: string): Stage<T> {
  const file = path.join(path.dirname(hookFile), 'lib', `${name}.js`);
  const cacheFile = path.join(path.dirname(hookFile), 'lib', `${name}.cache`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    /* none yet: made after this run */
  }
  const script = new vm.Script(fs.readFileSync(file, 'utf8'), { filename: file, cachedData });
  // A module of the first stage, by its id in the bundle (lib/store): this module is lib/load-stage.
  const host = { load: (id: string) => require(`../${id}`), exports: undefined as unknown };
  (script.runInThisContext() as StageFunction)((spec) => require(spec), hookFile, process, setTimeout, clearTimeout, host);
  const stale = cachedData === undefined || script.cachedDataRejected === true;
  const write = () => {
    try {
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    } catch {
      /* a read-only install compiles every time */
    }
  };
  let atExit = false;
  return {
    exports: host.exports as T,
    saveCache: () => {
      if (!stale) return;
      // The loader's warm-up runs under other V8 flags (no Sparkplug) and sets the run's flags again before it
      // writes its cache: a cache written now would record the warm-up's flags and be rejected by every run.
      if (!warmingUp()) write();
      else if (!atExit) {
        atExit = true;
        process.once('exit', write);
      }
    },
  };
}
