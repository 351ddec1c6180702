/**
 * How long `npm start` takes to serve, against the server started by hand.
 *
 * Times from spawning to the "serving http://..." line, on this repository's
 * dist/ (run after a build, so the build is current):
 *   baseline   `node dist/cli/positioner.js serve` (what npm start ends up running);
 *   npm start  `npm start -- --port 0` (cli/ensure-built.mjs finds the build current,
 *              then execs the server);
 *   check      `node cli/ensure-built.mjs` alone;
 *   old start  what npm start did before: a full `tsc -p .`, then the server
 *              (measured once: the compile alone, plus the baseline's median).
 * Figures are medians of a few runs and ratios to the baseline of the same
 * run. `--skip-full-build` leaves out the compile (it takes the CPU for a while).
 *
 *   npm run bench:start
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { machineLine, percentile } from './bench-helpers';

const ROOT = path.resolve(__dirname, '..', '..');
const RUNS = 5;

/** Spawns `cmd`, resolves with the ms until a "serving" line, then stops it with SIGTERM and waits for the exit. */
function timeToServe(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let ms: number | null = null;
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (ms === null && /serving http/.test(out)) {
        ms = Number(process.hrtime.bigint() - started) / 1e6;
        child.kill('SIGTERM');
      }
    });
    child.on('exit', () => (ms === null ? reject(new Error(`${cmd} ${args.join(' ')} exited before serving: ${out}`)) : resolve(ms)));
  });
}

function timeSync(cmd: string, args: string[]): number {
  const started = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status})`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function median(fn: () => Promise<number> | number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await fn());
  return percentile(samples, 50);
}

async function main(): Promise<void> {
  console.log(machineLine());
  // Make sure the build is current (and stamped) before timing anything.
  timeSync(process.execPath, ['cli/ensure-built.mjs']);
  const baseline = await median(() => timeToServe(process.execPath, ['dist/cli/positioner.js', 'serve', '--quiet']));
  const npmStart = await median(() => timeToServe('npm', ['start', '--silent', '--', '--quiet']));
  const check = await median(() => timeSync(process.execPath, ['cli/ensure-built.mjs']));
  const rows: [string, number][] = [
    ['baseline: node dist/cli/positioner.js serve', baseline],
    ['npm start, build current', npmStart],
    ['cli/ensure-built.mjs alone, build current', check],
  ];
  if (!process.argv.includes('--skip-full-build')) {
    const compile = timeSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', ROOT]);
    rows.push(['old npm start: tsc -p . then serve', compile + baseline]);
  }
  console.log(`median of ${RUNS} runs, time to the "serving" line:`);
  for (const [what, ms] of rows) console.log(`  ${what.padEnd(46)} ${ms.toFixed(0).padStart(6)} ms   ${(ms / baseline).toFixed(2)}x baseline`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
