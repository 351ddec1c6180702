/**
 * The `positioner` CLI where no positioner answers: usage errors (exit 2,
 * with the usage, and no request sent), help, an unreachable host (exit 3,
 * saying what to do) and colours in error messages (NO_COLOR, TERM=dumb,
 * not a terminal).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { buildCli, cliEnv, freePort, runCli, type CliResult } from '../helpers/cli';

const cli = buildCli(t);
const { version } = require('../../package.json') as { version: string };

/** Every request that reached the stand-in positioner. */
const requests: string[] = [];
/** host:port of a stand-in that records requests and refuses them all. */
let recorderHost: string;
/** host:port where nothing listens. */
let deadHost: string;

t.before(async () => {
  const recorder = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"the test recorder answers nothing"}');
  });
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => recorder.close(() => resolve())));
  recorderHost = `127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  deadHost = `127.0.0.1:${await freePort()}`;
});

function pos(t: Test, args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(t, cli, args, { env: cliEnv({ POSITIONER_HOST: recorderHost, ...env }) });
}

const lastLine = (text: string) => text.trim().split('\n').pop() ?? '';

t.test('usage errors exit 2 with the usage on stderr, and send nothing', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [[], /error: name a command: serve, status, move, move-rel, home, stop, config or scan/],
    [['frobnicate'], /error: Unknown argument: frobnicate/],
    [['stauts'], /error: Did you mean status\?/],
    [['move', '10'], /error: Not enough non-option arguments: got 1, need at least 2/],
    [['move', 'abc', '3'], /error: theta must be a number/],
    [['move-rel', '1', 'left'], /error: d_phi must be a number/],
    [['config', '--speed', 'fast'], /error: speed must be a number/],
    [['home', 'sideways'], /error: Invalid values:\s+Argument: axis, Given: "sideways"/],
    [['status', '--timeout', '0'], /error: --timeout must be a positive number, got 0/],
  ];
  const results = await Promise.all(cases.map(([args]) => pos(t, args)));
  cases.forEach(([args, message], i) => {
    const r = results[i];
    const what = `positioner ${args.join(' ')}`;
    t.equal(r.code, 2, `${what}: exit 2 (${lastLine(r.stderr)})`);
    t.equal(r.stdout, '', `${what}: nothing on stdout`);
    t.match(r.stderr, /^positioner /, `${what}: usage first`);
    t.match(r.stderr, /Options:/, `${what}: with the options`);
    t.match(r.stderr, message, what);
  });
  t.strictSame(requests, [], 'no request reached the positioner');
});

t.test('--help exits 0 with every command; a command has its own help; --version', async (t) => {
  const sent = requests.length;
  const [top, move, ver] = await Promise.all([pos(t, ['--help']), pos(t, ['move', '--help']), pos(t, ['--version'])]);
  t.equal(top.code, 0, top.stderr);
  for (const command of ['serve', 'status', 'move <theta> <phi>', 'move-rel <d_theta> <d_phi>', 'home [axis]', 'stop', 'config']) {
    t.match(top.stdout, `positioner ${command} `, `lists ${command}`);
  }
  t.equal(top.stderr, '');
  t.equal(move.code, 0, move.stderr);
  t.match(move.stdout, /positioner move <theta> <phi>[\s\S]*theta[\s\S]*phi[\s\S]*--wait/);
  t.equal(ver.code, 0);
  t.equal(ver.stdout, `${version}\n`);
  t.equal(requests.length, sent, 'help sends nothing');
});

t.test('an unreachable positioner exits 3 and says to start the server or set POSITIONER_HOST', async (t) => {
  const [viaEnv, viaFlag, waiting] = await Promise.all([
    pos(t, ['status'], { POSITIONER_HOST: deadHost }),
    pos(t, ['stop', '--host', `http://${deadHost}`]),
    pos(t, ['move', '1', '1', '--wait'], { POSITIONER_HOST: deadHost }),
  ]);
  for (const [what, r] of [['POSITIONER_HOST', viaEnv], ['--host', viaFlag], ['move --wait', waiting]] as const) {
    t.equal(r.code, 3, `${what}: exit 3 (${r.stderr.trim()})`);
    t.equal(r.stdout, '');
    t.match(r.stderr, `error: cannot reach the positioner at http://${deadHost}`, what);
    t.match(r.stderr, /start it with `positioner serve`/, what);
    t.match(r.stderr, /POSITIONER_HOST/, what);
  }
});

t.test('NO_COLOR: no ANSI escapes in an error on stderr, even on a terminal', async (t) => {
  // Colour needs a terminal: the fake-TTY preload makes stderr claim to be one.
  // Without it (any child of a test) there are never colours.
  const run = (env: Record<string, string | undefined>, tty: boolean) =>
    runCli(t, cli, ['status'], { env: cliEnv({ POSITIONER_HOST: deadHost, TERM: 'xterm-256color', ...env }), preload: tty ? [cli.fakeTty] : [] });
  const [coloured, noColor, dumb, pipe] = await Promise.all([run({}, true), run({ NO_COLOR: '1' }, true), run({ TERM: 'dumb' }, true), run({}, false)]);
  for (const r of [coloured, noColor, dumb, pipe]) t.equal(r.code, 3, r.stderr);
  t.match(coloured.stderr, /^\x1b\[31merror:\x1b\[0m cannot reach/, 'a terminal gets a red "error:" (so the checks below can fail)');
  t.notMatch(noColor.stderr, /\x1b/, 'NO_COLOR: no escape codes');
  t.match(noColor.stderr, /^error: cannot reach/);
  t.notMatch(dumb.stderr, /\x1b/, 'TERM=dumb: no escape codes');
  t.notMatch(pipe.stderr, /\x1b/, 'not a terminal: no escape codes');
});
