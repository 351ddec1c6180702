/**
 * A pattern scan from the dashboard, in headless Chromium against a real
 * server on the simulated positioner and its simulated antenna (the scan
 * contract: POST /scan, GET /scan, GET /scan/results, "scan" and "sample"
 * messages on the live feed): the form starts a small grid, the progress
 * and the heat map fill in while it runs, the polar cut and its -3 dB
 * beamwidth are drawn, the CSV downloads, samples missed while the feed
 * was down are fetched again, and a page opened afterwards shows the same
 * pattern from the stored results.
 */
import t from 'tap';
import { createSimulatedPositioner } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import { WallClock } from '../../sim/wall-clock';
import { openPage, screenshot } from '../helpers/browser';
import { serveDashboard } from '../helpers/dashboard';

const WAIT = { timeout: 60_000 };

t.test('the dashboard runs a small scan in simulation and plots it as it arrives', async (t) => {
  // 20 points of about 1.5 s of machine time each: some 6 s of wall time at 5x.
  const clock = new WallClock(5);
  const { positioner } = createSimulatedPositioner(clock, defaultConfig());
  t.teardown(() => positioner.stop());
  const api = await serveDashboard(t, positioner, clock);
  const { page, problems } = await openPage(t);
  await page.goto(api.baseUrl + '/');
  await page.waitForFunction(() => document.getElementById('link')?.dataset.link === 'up', null, WAIT);
  t.equal(await page.locator('#scan-form').isVisible(), true, 'the scan form is there');
  t.equal(await page.locator('#scan-count').innerText(), '228 points', 'the default plan: theta 0:180:10 x phi 0:330:30');

  // theta 0..60 by 15 (5) x phi 0..270 by 90 (4): 20 points.
  await page.selectOption('#scan-kind', 'grid');
  await page.fill('#scan-theta', '0:60:15');
  await page.fill('#scan-phi', '0:270:90');
  await page.fill('#scan-settle', '0.05');
  await page.selectOption('#scan-source', 'sim');
  t.equal(await page.locator('#scan-count').innerText(), '20 points', 'the form says how many points before starting');
  await page.click('#scan-start');

  // It fills in while it runs: some cells, not all, with the progress counting.
  await page.waitForFunction(
    () => {
      const cells = Number(document.getElementById('heatmap')?.dataset.cells ?? 0);
      return document.getElementById('scan-state')?.dataset.state === 'running' && cells > 0 && cells < 20;
    },
    null,
    { ...WAIT, polling: 'raf' },
  );
  // The feed drops mid-scan: samples sent meanwhile are fetched again once it is back.
  api.live.disconnectAll();
  const cellsAtDrop = Number(await page.locator('#heatmap').getAttribute('data-cells'));
  t.match(await page.locator('#scan-points').innerText(), /^\d+ \/ 20 points/, 'progress counts the points');
  await screenshot(page, 'dashboard-scan-running.png');

  await page.waitForFunction(() => document.getElementById('scan-state')?.dataset.state === 'done', null, WAIT);
  await page.waitForFunction(() => document.getElementById('heatmap')?.dataset.cells === '20', null, WAIT);
  t.ok(cellsAtDrop < 20, `the feed dropped with ${cellsAtDrop} of 20 points drawn, and all 20 are drawn in the end`);
  t.match(await page.locator('#scan-points').innerText(), /^20 \/ 20 points/);
  const served = (await api.get('/scan')).body as { state: string; points_done: number };
  t.match(served, { state: 'done', points_done: 20 }, 'the server ran the scan the page started');

  // The polar cut through the main beam: phi 0 with phi 180 mirrored, 9 points.
  t.equal(await page.locator('#polar-line').getAttribute('data-points'), '9', 'theta 0..60 at phi 0 and 15..60 at phi 180');
  const colours = await page.locator('#heat-cells rect').evaluateAll((rs) => new Set(rs.map((r) => r.getAttribute('fill'))).size);
  t.ok(colours > 3, `the heat map shows a pattern, not one colour (${colours} colours)`);
  const bw = await page.locator('#beamwidth').getAttribute('data-deg');
  if (bw !== null) {
    t.ok(Number(bw) > 0 && Number(bw) < 120, `-3 dB beamwidth marked: ${bw} deg`);
    t.equal(await page.locator('#bw-left').getAttribute('visibility'), 'visible');
    t.equal(await page.locator('#bw-right').getAttribute('visibility'), 'visible');
  } else {
    t.match(await page.locator('#beamwidth').innerText(), /not reached/, 'the cut is narrower than the beam: said so');
  }
  await screenshot(page, 'dashboard-scan-done.png');

  // Download CSV: the link serves the results as CSV, one row per sample.
  const href = await page.locator('#scan-csv').getAttribute('href');
  t.match(href ?? '', /^scan\/results\?format=csv&id=/);
  const csv = await page.evaluate((h) => fetch(h!).then((r) => r.text()), href);
  const lines = csv.trim().split('\n');
  t.match(lines[0], /^index,theta_deg,phi_deg,time_s,value/);
  t.equal(lines.length, 21, 'a header and 20 rows');

  // A page opened afterwards draws the same pattern from GET /scan/results.
  await page.reload();
  await page.waitForFunction(() => document.getElementById('heatmap')?.dataset.cells === '20', null, WAIT);
  t.equal(await page.locator('#polar-line').getAttribute('data-points'), '9');

  // STOP aborts a second scan, said in the page's words; Resume finishes it.
  await page.fill('#scan-theta', '0:60:15');
  await page.fill('#scan-phi', '0:90:90');
  await page.fill('#scan-settle', '0.05');
  await page.click('#scan-start');
  await page.waitForFunction(() => document.getElementById('scan-state')?.dataset.state === 'running' && Number(document.getElementById('heatmap')?.dataset.cells) > 0, null, WAIT);
  await page.click('#stop');
  await page.waitForFunction(() => document.getElementById('scan-state')?.dataset.state === 'aborted', null, WAIT);
  const why = await page.locator('#scan-times').innerText();
  t.match(why, /stopped by a stop command.*Resume continues/, `the abort is explained: ${why}`);
  t.notMatch(await page.locator('body').innerText(), /POST \//, 'no API wording on the page');
  t.equal(await page.locator('#scan-resume').isVisible(), true, 'Resume is offered');
  await page.click('#scan-resume');
  await page.waitForFunction(() => document.getElementById('scan-state')?.dataset.state === 'done', null, WAIT);
  t.match(await page.locator('#scan-points').innerText(), /^10 \/ 10 points/, 'resumed to the end');
  await page.waitForFunction(() => document.getElementById('heatmap')?.dataset.cells === '10', null, WAIT);
  t.same(problems, []);
});
