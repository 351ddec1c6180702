/**
 * Runs a bundled hook (the very bundle `build-hooks.ts` writes, byte for byte)
 * many times inside one Node process, so a corpus of hundreds of commands can
 * go through the real hook in both input shapes without starting hundreds of
 * processes on a shared 2-core machine. Only the process boundary is stood
 * in for: stdin is a regular file holding the input (the hook reads fd 0
 * with `fs.fstatSync` + `fs.readFileSync`), fd 1 and 2 are captured,
 * `process.exit` records the exit code, `process.env` is the run's own, and
 * the hook's deadline timer is not armed (each run ends synchronously).
 * command-table.test.ts runs a sample as real child processes.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

export type InProcessHook = (input: unknown, env: Record<string, string>) => Promise<InProcessResult>;

export function loadHookInProcess(file: string): InProcessHook {
  // hooks/<name>.js is a loader that runs hooks/lib/<name>.js, a function of (require, __filename); an older
  // build put the bundle itself in hooks/<name>.js.
  const bundleFile = path.join(path.dirname(file), 'lib', path.basename(file));
  const wrapped = fs.existsSync(bundleFile);
  const source = wrapped ? `return ${fs.readFileSync(bundleFile, 'utf8')}` : fs.readFileSync(file, 'utf8').replace(/^#!.*\n/, '');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const body = new Function('require', 'process', '__filename', '__dirname', 'module', 'exports', 'setTimeout', 'clearTimeout', source);
  return (input, env) =>
    new Promise((resolve) => {
      const text = typeof input === 'string' ? input : JSON.stringify(input);
      let stdout = '';
      let stderr = '';
      let done = false;
      const finish = (code: number) => {
        if (done) return;
        done = true;
        let json: any;
        try {
          json = stdout.trim() ? JSON.parse(stdout) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ code, stdout, stderr, json });
      };
      const fakeFs = new Proxy(fs, {
        get(target, key) {
          if (key === 'fstatSync')
            return (fd: number, ...rest: unknown[]) =>
              fd === 0 ? { isCharacterDevice: () => false, isFile: () => true, isFIFO: () => false } : (fs.fstatSync as any)(fd, ...rest);
          if (key === 'readFileSync') return (p: unknown, ...rest: unknown[]) => (p === 0 ? text : (fs.readFileSync as any)(p, ...rest));
          if (key === 'writeSync')
            return (fd: number, data: unknown, ...rest: unknown[]) => {
              if (fd === 1) stdout += String(data);
              else if (fd === 2) stderr += String(data);
              else return (fs.writeSync as any)(fd, data, ...rest);
              return String(data).length;
            };
          return Reflect.get(target, key);
        },
      });
      const fakeProcess = new Proxy(process, {
        get(target, key) {
          if (key === 'env') return env;
          if (key === 'exit') return (code?: number) => finish(code ?? 0);
          // The harness gives stdin as a regular file; a hook that turns to process.stdin would wait on the
          // test runner's own stdin: end the run at once and say so, rather than hang.
          if (key === 'stdin') {
            stderr += 'validator-harness: the hook read process.stdin, which this harness does not provide\n';
            finish(-1);
            return { on: () => undefined, once: () => undefined, resume: () => undefined, setEncoding: () => undefined };
          }
          const v = Reflect.get(target, key);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const req = (spec: string) => (spec === 'fs' || spec === 'node:fs' ? fakeFs : require(spec));
      const timer = { unref: () => timer, ref: () => timer };
      try {
        const noTimer = () => timer;
        const ran = body(req, fakeProcess, file, path.dirname(file), { exports: {} }, {}, noTimer, () => undefined);
        // The bundle is a function of (require, __filename, process, setTimeout, clearTimeout) (older builds: the first two).
        if (wrapped) ran(req, file, fakeProcess, noTimer, () => undefined);
      } catch (err) {
        stderr += String((err as Error).stack);
        finish(-1);
      }
    });
}
