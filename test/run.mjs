#!/usr/bin/env node
// `npm test`: every suite runs, whatever happened to the one before, and the
// last line counts them all ("N passed, N failed"), as CI reads it.
//
//   type check   tsc --noEmit over the whole tree (a type error is one failure)
//   unit         tap over test/**/*.test.ts (everything but test/live)
//   api:grbl     the positioner's HTTP suite (test/api/http-*) again, over the
//   api:firmata  grbl and the Firmata driver on a pty against the simulated boards
//   live         test/live: the drivers against the real grbl and ConfigurableFirmata
//                firmware on a simulated MCU, in real time; only where ../shared/*-real
//                exists, and only when named (`npm run test:live`, `npm test -- live`):
//                it runs for minutes, one simulated MCU at a time, and its real-time
//                checks depend on simavr keeping up with the wall clock, so neither
//                `npm test` nor CI runs it
//
// The HTTP suites over the drivers run beside `unit` (their own lane, their
// output held back and printed when they end): they run on a virtual clock that
// stops while bytes are on the line, so the load of the other lane cannot
// change what they see, and most of their time is spent waiting on the pty.
// `npm test -- unit api:grbl` runs only the suites named. Exit status 0 only
// if every suite ran and passed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(repo, 'node_modules', '.bin', name);
const shared = path.resolve(repo, '..', 'shared');
const liveSkip = !fs.existsSync(path.join(repo, 'test', 'live'))
  ? 'no test/live folder'
  : ['grbl-real', 'firmata-real'].some((d) => fs.existsSync(path.join(shared, d)))
    ? null
    : `no ${path.join(shared, 'grbl-real')} or firmata-real beside the repository`;

const suites = [
  { name: 'type check', cmd: bin('tsc'), args: ['-p', '.', '--noEmit'], tap: false },
  { name: 'unit', cmd: bin('tap'), args: [], tap: true },
  { name: 'api:grbl', cmd: bin('tap'), args: ['test/api/http-*.test.ts'], env: { POSITIONER_TEST_DRIVER: 'grbl' }, tap: true, lane: 'beside' },
  { name: 'api:firmata', cmd: bin('tap'), args: ['test/api/http-*.test.ts'], env: { POSITIONER_TEST_DRIVER: 'firmata' }, tap: true, lane: 'beside' },
  { name: 'live', cmd: bin('tap'), args: ['--timeout=600', '--jobs=1', 'test/live/*.test.ts'], tap: true, skip: liveSkip, onlyWhenNamed: true },
];

const wanted = process.argv.slice(2);
for (const w of wanted) {
  if (!suites.some((s) => s.name === w)) {
    process.stderr.write(`test/run.mjs: no suite '${w}'; the suites are: ${suites.map((s) => s.name).join(', ')}\n`);
    process.exit(2);
  }
}

/** Runs a suite; its output goes straight through, or (held) is kept and printed in one piece at its end. */
function run(suite, held) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(suite.cmd, suite.args, { cwd: repo, env: { ...process.env, ...suite.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const kept = [];
    const out = (chunk, stream) => {
      if (held) kept.push(chunk);
      else stream.write(chunk);
    };
    child.stderr.on('data', (chunk) => out(chunk, process.stderr));
    child.stdout.on('data', (chunk) => {
      out(chunk, process.stdout);
      tail = (tail + chunk.toString('utf8')).slice(-4096);
    });
    child.once('close', () => {
      if (held) process.stdout.write(`\n=== ${suite.name} (ran beside the others) ===\n${Buffer.concat(kept).toString('utf8')}`);
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

/** Runs suites one after another; returns their results in order. */
async function lane(list, held) {
  const results = [];
  for (const suite of list) {
    if (suite.skip) {
      results.push({ name: suite.name, note: `skipped: ${suite.skip}`, passed: 0, failed: 0, ok: true });
      continue;
    }
    if (!held) process.stdout.write(`\n=== ${suite.name} ===\n`);
    const r = await run(suite, held);
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
  return results;
}

const chosen = suites.filter((s) => (wanted.length === 0 ? !s.onlyWhenNamed : wanted.includes(s.name)));
const started = Date.now();
const [main, beside] = await Promise.all([lane(chosen.filter((s) => s.lane !== 'beside'), false), lane(chosen.filter((s) => s.lane === 'beside'), true)]);
const byName = new Map([...main, ...beside].map((r) => [r.name, r]));
const results = chosen.map((s) => byName.get(s.name));

process.stdout.write('\n');
for (const r of results) process.stdout.write(`${r.ok ? 'ok    ' : 'FAILED'} ${r.name.padEnd(12)} ${r.passed} passed, ${r.failed} failed (${r.note})\n`);
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
process.stdout.write(`all suites: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
