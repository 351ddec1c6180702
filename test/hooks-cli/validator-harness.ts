/**
 * Runs a bundled hook (the very file `build-hooks.ts` writes, byte for byte)
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

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

export type InProcessHook = (input: unknown, env: Record<string, string>) => Promise<InProcessResult>;

export function loadHookInProcess(file: string): InProcessHook {
  const source = fs.readFileSync(file, 'utf8').replace(/^#!.*\n/, '');
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
          const v = Reflect.get(target, key);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const req = (spec: string) => (spec === 'fs' || spec === 'node:fs' ? fakeFs : require(spec));
      const timer = { unref: () => timer, ref: () => timer };
      try {
        body(req, fakeProcess, file, file.replace(/\/[^/]*$/, ''), { exports: {} }, {}, () => timer, () => undefined);
      } catch (err) {
        stderr += String((err as Error).stack);
        finish(-1);
      }
    });
}
