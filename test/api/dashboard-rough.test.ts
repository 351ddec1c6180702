/**
 * What a new user hit on the dashboard (issue 16), in headless Chromium
 * against a real server: a page opened mid-move shows where the move goes
 * (bold target marks on the dials, from /status); a server that is gone
 * reads "offline", not the last state; refusals use the page's own words
 * (STOP, not "POST /stop"); homing shows each axis's progress; and on a
 * phone there is no empty "Keys" heading.
 */
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createSimulatedPositioner } from '../../cli/assemble';
import { createApiServer } from '../../api/server';
import { createScanner } from '../../cli/assemble-scan';
import { MemoryScanStore } from '../../firmware/scan-store';
import { defaultConfig } from '../../firmware/config';
import { WallClock } from '../../sim/wall-clock';
import { openPage, screenshot } from '../helpers/browser';
import { serveDashboard } from '../helpers/dashboard';

const WAIT = { timeout: 30_000 };
const live = () => document.getElementById('link')?.dataset.link === 'up';

t.test('opened mid-move, the page shows the target from /status with bold marks on both dials', async (t) => {
  // phi 0 -> 300 at 10 deg/s is 30 s of machine time: 15 s at 2x, time to open the page mid-move.
  const clock = new WallClock(2);
  const { positioner } = createSimulatedPositioner(clock, defaultConfig());
  t.teardown(() => positioner.stop());
  const api = await serveDashboard(t, positioner, clock);
  positioner.moveTo(120, 300);
  const { page, problems } = await openPage(t);
  await page.goto(api.baseUrl + '/');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'moving', null, WAIT);
  for (const [axis, deg] of [['theta', 120], ['phi', 300]] as const) {
    t.equal(await page.locator(`#target-${axis}`).getAttribute('visibility'), 'visible', `${axis}: the target is marked`);
    t.equal(Number(await page.locator(`#target-${axis}`).getAttribute('data-deg')), deg, `${axis}: at ${deg}`);
    t.equal(await page.locator(`#target-${axis}-text`).innerText(), `${deg}.000°`);
    const width = await page.locator(`#target-${axis} line`).evaluate((el) => parseFloat(getComputedStyle(el).strokeWidth));
    t.ok(width >= 5, `${axis}: the mark is bold (${width} px), not a thin dashed tick`);
  }
  await screenshot(page, 'dashboard-mid-move.png');
  positioner.stop();
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'stopped', null, WAIT);
  t.equal(await page.locator('#target-phi').getAttribute('visibility'), 'hidden', 'no target once stopped');
  t.equal(await page.locator('#target-phi-text').innerText(), '–');
  t.same(problems, []);
});

t.test('a server that is gone reads offline, not its last state; refusals say STOP, not POST /stop', async (t) => {
  const clock = new WallClock(2);
  const { positioner } = createSimulatedPositioner(clock, defaultConfig());
  t.teardown(() => positioner.stop());
  const { scanner } = createScanner({ positioner, clock, store: new MemoryScanStore() });
  const apiServer = createApiServer({ positioner, scanner });
  await new Promise<void>((resolve) => apiServer.server.listen(0, '127.0.0.1', () => resolve()));
  let closed = false;
  t.teardown(() => (closed ? undefined : apiServer.close()));
  const baseUrl = `http://127.0.0.1:${(apiServer.server.address() as AddressInfo).port}`;
  const { page, problems } = await openPage(t);
  await page.goto(baseUrl + '/');
  await page.waitForFunction(live, null, WAIT);

  // Busy: the API says "wait for it to finish or POST /stop"; the page names its button.
  await page.fill('#move-theta', '0');
  await page.fill('#move-phi', '300');
  await page.click('#move-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'moving', null, WAIT);
  await page.click('[data-jog="theta"][data-sign="1"]');
  await page.locator('#error').waitFor({ state: 'visible', ...WAIT });
  const error = await page.locator('#error-text').innerText();
  t.match(error, /busy/);
  t.match(error, /STOP/, `the refusal names the STOP button: ${error}`);
  t.notMatch(await page.locator('body').innerText(), /POST \//, 'no API wording anywhere on the page');
  await page.click('#stop');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'stopped', null, WAIT);

  // The server goes away.
  await apiServer.close();
  closed = true;
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'offline', null, WAIT);
  t.equal(await page.locator('#state').innerText(), 'OFFLINE', 'the state badge says offline (it said stopped)');
  t.match(await page.locator('#link').innerText(), /offline, retrying/);
  t.equal(await page.locator('body').getAttribute('data-online'), 'no');
  await screenshot(page, 'dashboard-offline.png');
  // Commands say the server cannot be reached, and the badge stays offline.
  t.equal(await page.locator('#error').isVisible(), false, 'the stop above cleared the busy error');
  await page.click('#stop');
  await page.locator('#error').waitFor({ state: 'visible', ...WAIT });
  t.match(await page.locator('#error-text').innerText(), /cannot reach the positioner/);
  t.equal(await page.locator('#state').getAttribute('data-state'), 'offline');
  // Chromium logs the refused jog and every failed reconnection as console errors; nothing else may fail.
  const expected = /status of 503|ERR_CONNECTION_REFUSED|WebSocket connection|Failed to fetch/;
  t.same(problems.filter((p) => !expected.test(p)), [], 'no page errors');
});

t.test('homing shows each axis going through seek, back off, slow approach and zero, both at once', async (t) => {
  // Real time: both axes seek together for 3.75 s (theta's 37.5 deg at 10 deg/s), phi for 12 s.
  const clock = new WallClock(1);
  const { positioner } = createSimulatedPositioner(clock, defaultConfig());
  t.teardown(() => positioner.stop());
  const api = await serveDashboard(t, positioner, clock);
  const { page, problems } = await openPage(t);
  await page.goto(api.baseUrl + '/');
  await page.waitForFunction(live, null, WAIT);
  t.equal(await page.locator('#homing').isVisible(), false, 'no homing panel at rest');
  await page.click('[data-home="both"]');
  await page.waitForFunction(
    () => document.getElementById('homing-theta')?.dataset.phase === 'seek' && document.getElementById('homing-phi')?.dataset.phase === 'seek',
    null,
    WAIT,
  );
  t.equal(await page.locator('#homing').isVisible(), true, 'the homing panel is shown');
  t.equal(await page.locator('#homing-theta li.now').innerText(), 'seek switch', 'the current step is highlighted');
  await screenshot(page, 'dashboard-homing.png');
  // theta (37.5 deg from its switch) finishes its seek long before phi (123.25 deg).
  await page.waitForFunction(() => ['back_off', 'approach', 'done'].includes(document.getElementById('homing-theta')?.dataset.phase ?? ''), null, WAIT);
  t.pass('theta moved on to its next phase');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'idle', null, { timeout: 60_000 });
  t.equal(await page.locator('#homing').isVisible(), false, 'the panel goes once homed');
  t.equal(await page.locator('#homed').innerText(), 'homed');
  t.same(problems, []);
});

t.test('on a phone the keyboard help is gone with its heading: no empty "Keys" title', async (t) => {
  const clock = new WallClock(2);
  const { positioner } = createSimulatedPositioner(clock, defaultConfig());
  const api = await serveDashboard(t, positioner, clock);
  const { page, problems } = await openPage(t, { width: 390, height: 760 });
  await page.goto(api.baseUrl + '/');
  await page.waitForFunction(live, null, WAIT);
  const headings = await page.locator('h2').evaluateAll((els) => els.filter((e) => (e as HTMLElement).offsetParent !== null).map((e) => (e as HTMLElement).innerText.trim()));
  t.notOk(headings.some((h) => /^keys/i.test(h)), `no visible Keys heading (${headings.join(', ')})`);
  t.ok(headings.some((h) => /^home/i.test(h)), 'the other headings are there');
  t.same(problems, []);
});
