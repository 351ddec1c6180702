// Turns tap's closing summaries ("# { total: N, pass: N, fail: N, ... }") into
// "N passed, N failed". `npm test` runs tap more than once (the whole tree,
// then the API suite again per serial driver), so every summary is added up.
// A run that failed before tap summarised (a type error, a crash) counts as
// one failure so CI never reports green by accident.
'use strict';
const fs = require('node:fs');
const [logPath, statusText] = process.argv.slice(2);
const text = fs.readFileSync(logPath, 'utf8');
const status = Number(statusText);
const lines = text.split('\n').filter((l) => /^# \{ total: \d+/.test(l));
let passed = 0;
let failed = 0;
for (const line of lines) {
  const field = (name) => Number((line.match(new RegExp(`${name}: (\\d+)`)) || [0, 0])[1]);
  passed += field('pass');
  failed += field('fail');
}
if (status !== 0 && failed === 0) failed = 1;
process.stdout.write(`${passed} passed, ${failed} failed\n`);
