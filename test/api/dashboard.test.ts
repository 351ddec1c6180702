/**
 * The web dashboard in headless Chromium (Debian's, via playwright-core)
 * against a real server whose positioner runs on a wall clock sped up 10x:
 * it loads and goes live, jogs (buttons and arrow keys), moves from the form,
 * its dials and plot follow the status, STOP (button and Esc) halts a move,
 * errors from the API and from the machine are shown in words, the config
 * form changes the settings, and it reconnects when the feed drops.
 * Screenshots are kept in test-artifacts/.
 */
import fs from 'node:fs';
import t from 'tap';
import type { Page } from 'playwright-core';
import { createSimulatedPositioner } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import { WallClock } from '../../sim/wall-clock';
import { openPage, screenshot } from '../helpers/browser';
import { serveDashboard } from '../helpers/dashboard';

const WAIT = { timeout: 20_000 };
const text = (page: Page, sel: string) => page.locator(sel).innerText();
const needle = async (page: Page, axis: string) => Number(await page.locator(`#needle-${axis}`).getAttribute('data-deg'));
/** y of the first and last point of a plot line (SVG y grows downward). */
async function plotEnds(page: Page, axis: string): Promise<{ n: number; firstY: number; lastY: number }> {
  const pts = ((await page.locator(`#plot-${axis}`).getAttribute('points')) ?? '').trim().split(/\s+/).filter(Boolean);
  const y = (p: string) => Number(p.split(',')[1]);
  return { n: pts.length, firstY: pts.length ? y(pts[0]) : NaN, lastY: pts.length ? y(pts[pts.length - 1]) : NaN };
}

t.test('the dashboard drives and shows the positioner', async (t) => {
  const clock = new WallClock(10);
  const machine = createSimulatedPositioner(clock, defaultConfig());
  const { positioner, sim } = machine;
  t.teardown(() => positioner.stop());
  const api = await serveDashboard(t, positioner, clock);
  const { page, problems } = await openPage(t);

  // Load: live, idle, the config and the position filled in.
  await page.goto(api.baseUrl + '/');
  t.equal(await page.title(), 'Positioner');
  await page.waitForFunction(() => document.getElementById('link')?.textContent === 'live', null, WAIT);
  t.equal((await page.locator('#state').getAttribute('data-state')), 'idle');
  t.equal(await page.inputValue('#cfg-speed'), '10');
  t.equal(await text(page, '#theta-deg'), '0.000');
  t.equal(await text(page, '#cfg-theta-spd'), '320');

  // Jog phi +10 with the button.
  await page.selectOption('#jog-step', '10');
  await page.click('[data-jog="phi"][data-sign="1"]');
  await page.waitForFunction(() => document.getElementById('phi-deg')?.textContent === '10.000' && document.getElementById('state')?.dataset.state === 'idle', null, WAIT);
  t.equal(positioner.status().phiDeg, 10, 'the positioner moved 10 deg in phi');
  t.equal(await needle(page, 'phi'), 10, 'the phi dial points at 10');
  const phiLine = await plotEnds(page, 'phi');
  t.ok(phiLine.n >= 3, `the plot has the move's samples (${phiLine.n} points)`);
  t.ok(phiLine.lastY < phiLine.firstY, 'the phi line rose from 0 to 10');

  // Jog theta +10 from the keyboard.
  await page.locator('body').focus();
  await page.keyboard.press('ArrowUp');
  await page.waitForFunction(() => document.getElementById('theta-deg')?.textContent === '10.000', null, WAIT);
  t.equal(positioner.status().thetaDeg, 10, 'ArrowUp jogged theta +10');

  // A move from the form: the dials pass through the middle and end at the target.
  await page.fill('#move-theta', '60');
  await page.fill('#move-phi', '100');
  await page.press('#move-phi', 'Enter');
  await page.waitForFunction(() => {
    const d = Number(document.getElementById('needle-phi')?.dataset.deg);
    return d > 20 && d < 90;
  }, null, WAIT);
  t.equal(await page.locator('#target-phi').getAttribute('visibility'), 'visible', 'the target is marked on the dial while moving');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'idle', null, WAIT);
  t.equal(await needle(page, 'theta'), 60);
  t.equal(await needle(page, 'phi'), 100);
  t.equal(await text(page, '#ax-phi-steps'), String(100 * 800), 'the axes table shows the step position');
  t.match(await text(page, '#log'), /moving → idle at θ 60\.000 φ 100\.000/, 'the log shows the arrival');
  await screenshot(page, 'dashboard.png');

  // STOP halts a long move; so does Esc, even from inside a text field.
  await page.fill('#move-phi', '360');
  await page.click('#move-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'moving', null, WAIT);
  await page.click('#stop');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'stopped', null, WAIT);
  t.equal(positioner.status().state, 'stopped', 'the STOP button stopped the positioner');
  const stoppedAt = positioner.status().phiDeg;
  t.ok(stoppedAt > 100 && stoppedAt < 360, `stopped partway: phi ${stoppedAt}`);
  await page.click('#move-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'moving', null, WAIT);
  await page.focus('#move-theta');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'stopped', null, WAIT);
  t.equal(positioner.status().state, 'stopped', 'Esc stopped the positioner');

  // Errors: the API's words, with its code; and the form's own check.
  await page.fill('#move-theta', '0');
  await page.fill('#move-phi', '100');
  await page.click('#move-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'idle' && document.getElementById('theta-deg')?.textContent === '0.000', null, WAIT);
  await page.click('[data-jog="theta"][data-sign="-1"]');
  await page.locator('#error').waitFor({ state: 'visible', ...WAIT });
  const error = await text(page, '#error-text');
  t.match(error, /outside theta's range 0\.\.180/, `the refusal is shown: ${error}`);
  t.match(error, /POS_ERR_OUT_OF_RANGE/);
  await page.click('#error-close');
  t.equal(await page.locator('#error').isVisible(), false, 'the error can be dismissed');
  await page.fill('#move-theta', '200');
  await page.click('#move-form button[type="submit"]');
  t.match(await text(page, '#error-text'), /θ must be a number from 0 to 180/);
  t.equal(await page.locator('#move-theta').getAttribute('aria-invalid'), 'true', 'the bad field is marked');

  // A machine fault: shown plainly, with what to do.
  sim.phi.faults.driver = 'phi driver over-temperature';
  await page.fill('#move-theta', '10');
  await page.click('#move-form button[type="submit"]');
  await page.locator('#fault').waitFor({ state: 'visible', ...WAIT });
  const fault = await text(page, '#fault');
  t.match(fault, /phi driver over-temperature/);
  t.match(fault, /POS_ERR_HARDWARE/);
  t.match(fault, /Home/);
  t.equal(await page.locator('#state').getAttribute('data-state'), 'error');
  await screenshot(page, 'dashboard-fault.png');
  sim.phi.faults.driver = null;

  // Config from the form.
  await page.fill('#cfg-speed', '20');
  await page.click('#config-form button[type="submit"]');
  await page.waitForFunction(() => /speed 20/.test(document.getElementById('log')?.textContent ?? ''), null, WAIT);
  t.equal(positioner.settings().speedDegS, 20, 'the speed was changed');

  // The feed drops: the page says so, reconnects, and is live again.
  api.live.disconnectAll();
  await page.waitForFunction(() => document.getElementById('link')?.dataset.link === 'down', null, WAIT);
  await page.waitForFunction(() => document.getElementById('link')?.dataset.link === 'up', null, WAIT);
  t.pass('reconnected after the feed dropped');

  // Homing clears the fault.
  await page.click('[data-home="both"]');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'idle', null, { timeout: 60_000 });
  t.equal(await page.locator('#fault').isVisible(), false, 'the fault banner is gone after homing');
  t.equal(await text(page, '#homed'), 'homed');

  // Chromium logs every 4xx answer as a console error: the one refused jog above is expected.
  const expected = /Failed to load resource: the server responded with a status of 400/;
  t.equal(problems.filter((p) => expected.test(p)).length, 1, 'the refused jog was the only failed request');
  t.same(problems.filter((p) => !expected.test(p)), [], 'no page errors and no other console errors');
});

t.test('at phone width everything stacks and STOP stays on screen while scrolling', async (t) => {
  const clock = new WallClock(10);
  const { positioner } = createSimulatedPositioner(clock, defaultConfig());
  const api = await serveDashboard(t, positioner, clock);
  const { page, problems } = await openPage(t, { width: 390, height: 760 });
  await page.goto(api.baseUrl + '/');
  await page.waitForFunction(() => document.getElementById('link')?.textContent === 'live', null, WAIT);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  t.ok(width <= 390, `no horizontal scrolling (${width} px)`);
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  const box = await page.locator('#stop').boundingBox();
  t.ok(box && box.y >= 0 && box.y + box.height <= 760, `STOP is in view at the bottom of the page: ${JSON.stringify(box)}`);
  await page.click('#stop');
  await page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'stopped', null, WAIT);
  t.pass('and it works there');
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = await screenshot(page, 'dashboard-narrow.png');
  t.ok(fs.statSync(file).size > 10_000, 'a screenshot was kept');
  t.same(problems, []);
});
