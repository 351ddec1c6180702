/**
 * Loads a hook's second stage, `hooks/lib/<name>.js` (build-hooks.ts,
 * STAGES), as the loader loads a hook: compiled through vm.Script with V8's
 * code cache `hooks/lib/<name>.cache`, which holds what the stage's own runs
 * compiled (a cache shared with the first stage would hold either stage's
 * functions depending on which ran first). The stage's modules that the
 * first stage also has are the first stage's instances: one store, one set
 * of notices and lock settings per run.
 *
 * A stage may have stages of its own (build-hooks.ts, RULE_STAGES: the deep
 * analysis's rule families), loaded the same way when the stage first requires
 * one of their modules; theirs take the modules they share from the stage that
 * loaded them, and through it from the first stage.
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { warmingUp } from './hook-runtime';

export interface Stage<T> {
  exports: T;
  /** The stage's module loader (by module id, as in its bundle). */
  own: ModuleLoader;
  /**
   * Writes the code cache when there was none or V8 rejected it, and those of the stages this one loaded; call
   * after the stage's work, so its functions are in it.
   */
  saveCache(): void;
}

type ModuleLoader = (id: string) => unknown;

/**
 * A stage that cannot be read or compiled (a file missing from an install, a damaged one). The validator
 * blocks the line then (entries/command-validator.ts): its rules, the split-off families' included, could
 * not judge it, and a guard that cannot run must not let a call through.
 */
export class StageLoadError extends Error {
  readonly code = 'HOOKS_STAGE_LOAD';
}

/** What a stage bundle gets from its loader: the modules it shares, its own stages, and where it puts its exports and its loader. */
interface StageHost {
  load: ModuleLoader;
  stage(name: string, parentLoad: ModuleLoader): ModuleLoader;
  exports: unknown;
  own?: ModuleLoader;
}

/** The function a stage bundle is: the loader's arguments, and the host that lends it the first stage's modules. */
type StageFunction = (req: (spec: string) => unknown, filename: string, proc: NodeJS.Process, st: typeof setTimeout, ct: typeof clearTimeout, host: StageHost) => void;

/**
 * Loads stage `name` beside `hookFile`. Its shared modules come from `parentLoad`: by default the first stage's
 * (this module is lib/load-stage in it), for a stage's own stage the loader of the stage that asked for it.
 */
export function loadStage<T>(hookFile: string, name: string, parentLoad: ModuleLoader = (id) => require(`../${id}`)): Stage<T> {
  const file = path.join(path.dirname(hookFile), 'lib', `${name}.js`);
  const cacheFile = path.join(path.dirname(hookFile), 'lib', `${name}.cache`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    /* none yet: made after this run */
  }
  let script: vm.Script;
  try {
    script = new vm.Script(fs.readFileSync(file, 'utf8'), { filename: file, cachedData });
  } catch (err) {
    throw new StageLoadError(`cannot load ${name} (${(err as Error).message})`);
  }
  // The stages this one loads, once each, saved with it.
  const stages = new Map<string, Stage<unknown>>();
  const host: StageHost = {
    load: parentLoad,
    stage: (stageName, load) => {
      let s = stages.get(stageName);
      if (!s) stages.set(stageName, (s = loadStage<unknown>(hookFile, stageName, load)));
      return s.own;
    },
    exports: undefined,
  };
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
    own: host.own!,
    saveCache: () => {
      for (const s of stages.values()) s.saveCache();
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
