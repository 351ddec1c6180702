#!/usr/bin/env node
// `npm test`: every suite runs, whatever happened to the one before, and the
// last line counts them all ("N passed, N failed"), as CI reads it.
//
//   type check   tsc --noEmit over the whole tree (a type error is one failure)
//   unit         tap over test/**/*.test.ts (everything but test/live)
//   api:grbl     the positioner's HTTP suite (test/api/http-*) again, over the
//   api:firmata  grbl and the Firmata driver on a pty against the simulated boards
//   live         test/live: the drivers against the real grbl and ConfigurableFirmata
//                firmware on a simulated MCU; only where ../shared/*-real exists
//
// `npm test -- unit api:grbl` runs only the suites named. Exit status 0 only
// if every suite ran and passed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(repo, 'node_modules', '.bin', name);
const shared = path.resolve(repo, '..', 'shared');
const hasLive = fs.existsSync(path.join(repo, 'test', 'live')) && ['grbl-real', 'firmata-real'].some((d) => fs.existsSync(path.join(shared, d)));

const suites = [
  { name: 'type check', cmd: bin('tsc'), args: ['-p', '.', '--noEmit'], tap: false },
  { name: 'unit', cmd: bin('tap'), args: [], tap: true },
  { name: 'api:grbl', cmd: bin('tap'), args: ['test/api/http-*.test.ts'], env: { POSITIONER_TEST_DRIVER: 'grbl' }, tap: true },
  { name: 'api:firmata', cmd: bin('tap'), args: ['test/api/http-*.test.ts'], env: { POSITIONER_TEST_DRIVER: 'firmata' }, tap: true },
  { name: 'live', cmd: bin('tap'), args: ['--timeout=600', 'test/live/*.test.ts'], tap: true, skip: hasLive ? null : 'no ../shared/grbl-real or ../shared/firmata-real beside the repository' },
];

const wanted = process.argv.slice(2);
for (const w of wanted) {
  if (!suites.some((s) => s.name === w)) {
    process.stderr.write(`test/run.mjs: no suite '${w}'; the suites are: ${suites.map((s) => s.name).join(', ')}\n`);
    process.exit(2);
  }
}

function run(suite) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(suite.cmd, suite.args, { cwd: repo, env: { ...process.env, ...suite.env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString('utf8')).slice(-4096);
    });
    child.once('error', (e) => resolve({ code: 1, tail: '', seconds: 0, error: e.message }));
    child.once('close', (code, signal) => resolve({ code: code ?? 1, signal, tail, seconds: (Date.now() - started) / 1000 }));
  });
}

/** tap's closing summary "# { total: N, pass: N, fail: N, ... }". */
function tapCounts(tail) {
  const line = tail.split('\n').reverse().find((l) => /^# \{ total: \d+/.test(l));
  if (!line) return null;
  const field = (name) => Number((line.match(new RegExp(`${name}: (\\d+)`)) ?? [0, 0])[1]);
  return { passed: field('pass'), failed: field('fail'), skipped: field('skip') };
}

const results = [];
for (const suite of suites) {
  if (wanted.length > 0 && !wanted.includes(suite.name)) continue;
  if (suite.skip) {
    results.push({ name: suite.name, note: `skipped: ${suite.skip}`, passed: 0, failed: 0, ok: true });
    continue;
  }
  process.stdout.write(`\n=== ${suite.name} ===\n`);
  const r = await run(suite);
  let passed = 0;
  let failed = 0;
  if (suite.tap) {
    const counts = tapCounts(r.tail);
    if (counts) ({ passed, failed } = counts);
    // A run that ended without its summary (a crash, a timeout) or failed with no failing test still counts as a failure.
    if (r.code !== 0 && failed === 0) failed = 1;
  } else if (r.code === 0) passed = 1;
  else failed = 1;
  results.push({ name: suite.name, passed, failed, ok: r.code === 0, note: `${r.seconds.toFixed(1)} s${r.error ? `, ${r.error}` : ''}${r.signal ? `, killed by ${r.signal}` : ''}` });
}

process.stdout.write('\n');
for (const r of results) process.stdout.write(`${r.ok ? 'ok    ' : 'FAILED'} ${r.name.padEnd(12)} ${r.passed} passed, ${r.failed} failed (${r.note})\n`);
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
