/**
 * `positioner scan` as a child process against a real `positioner serve`
 * child (free port, its scans in a SQLite file of the test's): --wait with
 * the progress bar and ETA, --out writing the CSV, `scan results`, and the
 * refusals that name the CLI's own flags. What the scan did is checked on
 * the server over HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildCli, cliEnv, http, runCli, spawnCli, startServe, until, type ServeRun } from '../helpers/cli';

const cli = buildCli(t);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scan-cli-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
let server: ServeRun;

t.before(async () => {
  // Real time: the scan lasts a few seconds, long enough for a progress line with an ETA.
  server = await startServe(t, cli, ['--port', '0', '--quiet', '--scan-db', path.join(dir, 'scans.db')]);
});

const pos = (args: string[]) => runCli(t, cli, args, { env: cliEnv({ POSITIONER_HOST: server.hostPort }), timeoutMs: 60_000 });

t.test('scan --wait --out p.csv: follows the scan with a progress bar and ETA and writes the CSV', async (t) => {
  const out = path.join(dir, 'p.csv');
  const r = await pos(['scan', '--theta', '0:2:1', '--phi', '0:2:1', '--settle', '0.6', '--wait', '--out', out]);
  t.equal(r.code, 0, `exit 0; stderr: ${r.stderr}`);
  t.match(r.stderr, /scan .*: 9 points/, 'says how many points');
  t.match(r.stderr, /scan \[[#.]+\]\s+\d+%\s+\d\/9 points\s+ETA \d+s/, 'a progress line with points and an ETA');
  t.match(r.stderr, /done, 9\/9 points/, 'the last line says done');
  t.match(r.stderr, new RegExp(`wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const lines = fs.readFileSync(out, 'utf8').trim().split('\n');
  t.equal(lines[0], 'index,theta_deg,phi_deg,time_s,value,error');
  t.equal(lines.length, 10, 'one row per point');
  t.same(lines.slice(1).map((l) => l.split(',').slice(0, 3).join(',')), ['0,0,0', '1,1,0', '2,2,0', '3,2,1', '4,1,1', '5,0,1', '6,0,2', '7,1,2', '8,2,2']);
  for (const l of lines.slice(1)) t.ok(Number.isFinite(Number(l.split(',')[4])), `a value on every row: ${l}`);
  const scan = (await http(`${server.url}/scan`)).body;
  t.match(scan, { state: 'done', points_done: 9, request: { settle_s: 0.6, plan: { kind: 'grid', theta: { start_deg: 0, stop_deg: 2, step_deg: 1 } } } });

  const json = await pos(['scan', 'results', '--format', 'json']);
  t.equal(json.code, 0);
  const body = JSON.parse(json.stdout) as { id: string; samples: unknown[] };
  t.equal(body.id, scan.id);
  t.equal(body.samples.length, 9);
  const csv = await pos(['scan', 'results']);
  t.equal(csv.stdout, fs.readFileSync(out, 'utf8'), 'scan results prints the same CSV');
  const status = await pos(['scan', 'status']);
  t.match(status.stdout, /: done, 9\/9 points/);
});

t.test('refusals name the CLI flags and units; exit 2 for usage, 1 for a refused plan', async (t) => {
  const bad = await pos(['scan', '--theta', '0:180']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--theta takes START:STOP:STEP in degrees, e\.g\. 0:180:5; got '0:180'/);
  const zero = await pos(['scan', '--theta', '0:180:0']);
  t.equal(zero.code, 1);
  t.match(zero.stderr, /--theta STEP must be > 0/, `names the flag: ${zero.stderr}`);
  t.notMatch(zero.stderr, /step_deg/);
  const settle = await pos(['scan', '--settle', '-1']);
  t.equal(settle.code, 2);
  t.match(settle.stderr, /--settle must be a number >= 0/);
  const source = await pos(['scan', '--source', 'exec']);
  t.equal(source.code, 2);
  t.match(source.stderr, /--source exec needs the command/);
  const unknown = await pos(['scan', '--source', 'vna']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /--source is sim, exec CMD, http URL or trigger/);
});

t.test('Ctrl-C during scan --wait stops the positioner (the scan is aborted), writes what was measured, exits 130; scan resume continues', async (t) => {
  const out = path.join(dir, 'partial.csv');
  const run = spawnCli(t, cli, ['scan', '--theta', '0:10:1', '--phi', '0:0:1', '--settle', '0.3', '--wait', '--out', out], { env: cliEnv({ POSITIONER_HOST: server.hostPort }), timeoutMs: 60_000 });
  // The CLI prints this line just before it starts following the scan (and catching SIGINT).
  await until('the CLI to follow the scan', async () => /: 11 points/.test(run.stderr()), 20_000);
  await until('two points of this scan measured', async () => {
    const s = (await http(`${server.url}/scan`)).body;
    return s.points_total === 11 && s.state === 'running' && s.points_done >= 2;
  }, 20_000);
  run.child.kill('SIGINT');
  const r = await run.done;
  t.equal(r.code, 130, r.stderr);
  t.match(r.stderr, /interrupted at \d+\/11 points; positioner stopped/);
  const scan = (await http(`${server.url}/scan`)).body;
  t.equal(scan.state, 'aborted');
  const rows = fs.readFileSync(out, 'utf8').trim().split('\n');
  t.equal(rows.length - 1, scan.points_done, 'the CSV holds the points measured before the stop');
  const resumed = await pos(['scan', 'resume', '--wait']);
  t.equal(resumed.code, 0, resumed.stderr);
  t.match(resumed.stderr, /done, 11\/11 points/);
});
