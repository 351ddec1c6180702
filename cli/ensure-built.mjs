#!/usr/bin/env node
/**
 * `npm start` and `npm run space` build first, but only when the build is
 * stale: a full `tsc -p .` costs 6 s on an idle machine (far more on a busy
 * one) and used to run on every start. Here: if no TypeScript source the
 * servers run (tsconfig's folders but test/ and bench/), tsconfig.json or
 * package.json is newer than the stamp the last successful build left in
 * dist/, nothing is compiled (a few ms of stat calls);
 * otherwise `tsc -p .` runs and, only if it succeeds, the stamp is renewed,
 * so a build killed half-way (Ctrl-C during a start) is redone next time.
 *
 * Plain JavaScript on purpose: it runs before anything is compiled.
 * Exit status: 0 built or current; tsc's status when the build fails.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const tsconfig = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
const SKIP = new Set(['node_modules', 'dist', '.git']);
/** Compiled too, but not part of what `npm start` and `npm run space` run: editing a test does not make them rebuild. */
const NOT_RUN = new Set(['test', 'bench']);

/** The newest modification time (ms) of the .ts/.json sources under `dir`. */
function newestMs(dir) {
  let newest = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (SKIP.has(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMs(p));
    else if (/\.(ts|json)$/.test(e.name) && !e.name.endsWith('.d.ts.map')) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

function stampMs() {
  try {
    return fs.statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
}

const sourcesMs = Math.max(
  ...(tsconfig.include ?? []).filter((d) => !NOT_RUN.has(d)).map((d) => newestMs(path.join(root, d))),
  fs.statSync(path.join(root, 'tsconfig.json')).mtimeMs,
  fs.statSync(path.join(root, 'package.json')).mtimeMs,
);
const builtMs = stampMs();
if (builtMs >= sourcesMs) process.exit(0);

const startedMs = Date.now();
process.stderr.write(builtMs < 0 ? 'building (first start)…\n' : 'sources changed since the last build: building…\n');
const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', root], { stdio: 'inherit' });
if (tsc.status !== 0) {
  process.stderr.write(`the build failed (tsc exit ${tsc.status ?? tsc.signal}); fix the errors above, or run \`npm run build\`\n`);
  process.exit(tsc.status || 1);
}
// Stamped with the time the build started: a source saved during the build is newer, and rebuilt next time.
fs.mkdirSync(path.dirname(stamp), { recursive: true });
fs.writeFileSync(stamp, `${new Date(startedMs).toISOString()}\n`);
fs.utimesSync(stamp, startedMs / 1000, startedMs / 1000);
process.stderr.write(`built in ${((Date.now() - startedMs) / 1000).toFixed(1)} s\n`);
