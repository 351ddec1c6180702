/**
 * The `registry-proto` CLI as child processes for the registry tests: built
 * once per test file from the sources (test/helpers/cli.ts), run with an
 * optional stdin and a clean environment.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { buildCli, cliEnv, type BuiltCli } from './cli';

export interface RegistryCliRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface RegistryCli {
  cli: BuiltCli;
  /** A path in the test's temporary folder. */
  file(name: string): string;
  /** Runs the CLI with `input` on stdin (none: an empty stdin). */
  run(args: string[], input?: string | Buffer, env?: Record<string, string | undefined>): Promise<RegistryCliRun>;
}

export function registryCli(t: Test): RegistryCli {
  const cli = buildCli(t, 'registry-proto');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-cli-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (args: string[], input: string | Buffer = '', env: Record<string, string | undefined> = {}): Promise<RegistryCliRun> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [cli.entry, ...args], { env: cliEnv({ NO_COLOR: '1', ...env }), stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(out), stderr: err });
      });
      child.stdin.end(input);
    });
  return { cli, file: (name) => path.join(dir, name), run };
}
