/**
 * The subscribe page (api/space/web/) in headless Chromium (Debian's, via
 * playwright-core) against the real service on a free port with a SQLite file
 * in the test's folder.
 *
 * Chromium offline cannot reach its push service (Google's), so "Turn on"
 * goes through permission and the service worker and then must report the
 * silent push service on the page within its bound. The service worker's
 * push handler is driven through the DevTools call
 * ServiceWorker.deliverPushMessage with the payload the service builds;
 * its click handler is tested in Node (browser-sw.test.ts), since a click on
 * a notification cannot be made from a test. Push delivery to a real push
 * service is tested in push.test.ts against web-push-testing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { chromium, type Page } from 'playwright-core';
import { ManualClock } from '../../api/space/clock';
import { pushPayload } from '../../api/space/delivery';
import { openDatabase } from '../../api/space/db';
import { startSpaceService } from '../../api/space/serve';
import { Store } from '../../api/space/store';
import { CHROMIUM, openPage, screenshot } from '../helpers/browser';
import { startPrefixProxy } from '../helpers/prefix-proxy';
import { startService } from '../helpers/space';

const WAIT = { timeout: 20_000 };
const ready = (page: Page) => page.waitForFunction(() => document.body.dataset.ready === 'true' && document.getElementById('link')?.dataset.link === 'up', null, WAIT);
const attr = (page: Page, sel: string, name: string) => page.locator(sel).getAttribute(name);
const entryCount = (page: Page) => page.locator('#log li.entry').count();
/** Chromium logs every 4xx answer as a console error; the ones a test provokes on purpose are told apart by status. */
const refused = (problems: string[], status: number) => problems.filter((p) => p.includes(`status of ${status}`)).length;

t.test('the subscribe page: permission, service worker, bounded subscribe, log and read state, send test live, preferences', async (t) => {
  const { service, api } = await startService(t);
  // Before the page loads: two entries in the log, and a conjunction preference with a config the page does not show.
  await api.post('/api/notifications/test');
  await api.put('/api/notifications/preferences/global/conjunction', { config: { max_range_km: 5 }, lead_times: [60] });
  await service.notifier.deliver({ category: 'conjunction', title: 'Close approach: SAMPLE-A / SAMPLE-B', body: '0.4 km at 12:00 UTC', data: { url: 'https://celestrak.org/SOCRATES/' }, location_id: null });

  const { context, page, problems } = await openPage(t);
  await context.grantPermissions(['notifications'], { origin: service.url });
  await page.goto(`${service.url}/`);
  await ready(page);
  t.equal(await page.title(), '(2) Space notifications', 'the title counts the unread entries');
  t.equal(await entryCount(page), 2, 'the log shows both entries');
  t.equal(await page.locator('#log li.entry').first().locator('.title').innerText(), 'Close approach: SAMPLE-A / SAMPLE-B', 'newest first');
  t.equal(await attr(page, '#unread', 'data-count'), '2');
  t.equal(await attr(page, '#push-status', 'data-state'), 'off', 'not subscribed yet');
  t.equal(await page.evaluate(() => Notification.permission), 'granted');

  // Turn on: permission, the service worker, then a push service that never answers: a clear message within the bound, not a hang.
  // (Without the internet Chromium's pushManager.subscribe() neither resolves nor rejects: seen still pending after 60 s.)
  const started = Date.now();
  await page.click('#subscribe');
  await page.waitForFunction(() => document.getElementById('push-status')?.dataset.state === 'failed', null, { timeout: 45_000 });
  const waitedMs = Date.now() - started;
  const message = await page.locator('#push-status').innerText();
  t.match(message, /push service did not answer within 15 s, so this browser is not subscribed/, `the page says what happened: ${message}`);
  t.match(message, /check the connection/, 'and what to do');
  t.ok(waitedMs >= 14_000 && waitedMs < 40_000, `bounded by the page's 15 s (${waitedMs} ms)`);
  t.equal(await page.locator('#subscribe').isEnabled(), true, 'it can be tried again');
  const sw = await page.evaluate(async () => {
    const reg = await navigator.serviceWorker.getRegistration();
    return reg ? { script: reg.active?.scriptURL, scope: reg.scope } : null;
  });
  t.strictSame(sw, { script: `${service.url}/sw.js`, scope: `${service.url}/` }, 'the service worker is registered for the whole origin');
  t.equal((service.db.prepare('SELECT COUNT(*) AS n FROM subscriptions').get() as { n: number }).n, 0, 'nothing was registered with the service');

  // Mark one read: the page and the service agree.
  const first = page.locator('#log li.entry').first();
  const firstId = Number(await first.getAttribute('data-id'));
  await first.locator('.mark-read').click();
  await page.waitForFunction((id) => document.getElementById(`n-${id}`)?.dataset.read === 'true', firstId, WAIT);
  await page.waitForFunction(() => document.getElementById('unread')?.dataset.count === '1', null, WAIT);
  t.type((await api.get('/api/notifications')).body.find((n: { id: number }) => n.id === firstId).read_at, 'string', 'read on the service');
  t.equal(await first.locator('.mark-read').isVisible(), false, 'a read entry has no "Mark read" button');

  // Send test: the entry arrives over the live feed (the page never adds one from the POST's answer).
  await page.click('#send-test');
  await page.waitForFunction(() => document.querySelectorAll('#log li.entry').length === 3, null, WAIT);
  t.equal(await page.locator('#test-result').innerText(), 'Sent to 0 subscriptions.');
  t.equal(await page.locator('#log li.entry').first().locator('.title').innerText(), 'Test notification');
  t.equal(await attr(page, '#log li.entry >> nth=0', 'data-read'), 'false');
  t.equal(await attr(page, '#unread', 'data-count'), '2');
  // One written by another client shows up too: only the feed can have brought it.
  const other = await api.post('/api/notifications/test');
  await page.waitForFunction((id) => Boolean(document.getElementById(`n-${id}`)), other.body.notification_id, WAIT);
  t.equal(await entryCount(page), 4);
  t.equal(await attr(page, '#unread', 'data-count'), '3');

  // Mark all read, from the keyboard.
  await page.focus('#read-all');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('unread')?.dataset.count === '0', null, WAIT);
  t.equal(await page.locator('#log li.entry[data-read="false"]').count(), 0, 'every entry shows read');
  t.equal((await api.get('/api/notifications/unread-count')).body.count, 0, 'and the service agrees');
  t.equal(await page.title(), 'Space notifications');

  // Preferences: edit and save; fields the form does not show (config) are kept.
  await page.click('#pref-global-conjunction summary');
  t.equal(await page.inputValue('#pref-global-conjunction-lead'), '60', 'the saved lead time is shown');
  await page.fill('#pref-global-conjunction-lead', '1440, 60');
  await page.fill('#pref-global-conjunction-quiet-start', '22:00');
  await page.fill('#pref-global-conjunction-quiet-end', '07:00');
  await page.fill('#pref-global-conjunction-tz', 'Europe/Berlin');
  await page.click('#pref-global-conjunction button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('pref-global-conjunction-status')?.textContent === 'Saved.', null, WAIT);
  const saved = (await api.get('/api/notifications/preferences')).body.find((p: { category: string }) => p.category === 'conjunction');
  t.match(saved, { location_id: null, is_enabled: true, lead_times: [1440, 60], quiet_start: '22:00', quiet_end: '07:00', timezone: 'Europe/Berlin', config: { max_range_km: 5 } }, 'saved as edited, config kept');
  t.match(await page.locator('#pref-global-conjunction .pref-state').innerText(), /on · 1440, 60 min before · quiet 22:00–07:00/);

  // A value the service refuses: its words and code on the form.
  await page.fill('#pref-global-conjunction-lead', '0');
  await page.click('#pref-global-conjunction button[type="submit"]');
  await page.waitForFunction(() => /SPACE_ERR_INVALID/.test(document.getElementById('pref-global-conjunction-status')?.textContent ?? ''), null, WAIT);
  t.match(await page.locator('#pref-global-conjunction-status').innerText(), /lead_times/, 'the refusal names the field');
  // One the page refuses before asking: the field is marked and focused.
  await page.fill('#pref-global-conjunction-lead', 'soon');
  await page.click('#pref-global-conjunction button[type="submit"]');
  t.match(await page.locator('#pref-global-conjunction-status').innerText(), /whole minutes/);
  t.equal(await attr(page, '#pref-global-conjunction-lead', 'aria-invalid'), 'true');
  t.equal(await page.evaluate(() => document.activeElement?.id), 'pref-global-conjunction-lead');

  // Turn a category off, then remove it.
  await page.fill('#pref-global-conjunction-lead', '');
  await page.uncheck('#pref-global-conjunction-enabled');
  await page.click('#pref-global-conjunction button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#pref-global-conjunction .pref-state')?.textContent === 'off', null, WAIT);
  t.match((await api.get('/api/notifications/preferences')).body[0], { category: 'conjunction', is_enabled: false, lead_times: null });
  await page.click('#pref-global-conjunction .remove');
  await page.waitForFunction(() => document.querySelector('#pref-global-conjunction .pref-state')?.textContent === 'not set', null, WAIT);
  t.strictSame((await api.get('/api/notifications/preferences')).body, [], 'removed on the service');

  // A location preference: added, saved with its minimum altitude.
  await page.fill('#add-location-id', '12');
  await page.selectOption('#add-location-category', 'satellite_pass');
  await page.press('#add-location-id', 'Enter');
  t.equal(await page.locator('#pref-12-satellite_pass').getAttribute('open'), '', 'the new preference opens for editing');
  await page.fill('#pref-12-satellite_pass-alt', '25');
  await page.fill('#pref-12-satellite_pass-tz', 'UTC');
  await page.click('#pref-12-satellite_pass button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('pref-12-satellite_pass-status')?.textContent === 'Saved.', null, WAIT);
  t.match((await api.get('/api/notifications/preferences')).body, [{ location_id: 12, category: 'satellite_pass', min_altitude: 25, timezone: 'UTC' }]);

  // Every control has a label.
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select')].filter((e) => (e as HTMLInputElement).labels?.length === 0).map((e) => e.id));
  t.strictSame(unlabelled, [], 'every field has a label');

  // The service worker shows a push as the service builds it: title, body, icon and the click URL.
  const cdp = await context.newCDPSession(page);
  const registered = new Promise<{ registrationId: string }>((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
      const r = e.registrations.find((x) => x.scopeURL === `${service.url}/` && !x.isDeleted);
      if (r) resolve(r);
    });
  });
  await cdp.send('ServiceWorker.enable');
  const reg = await registered;
  // What the worker shows is read from its call to the real showNotification (the call goes through, and its
  // promise must resolve): getNotifications() cannot be asked, since headless Chromium on a machine without a
  // notification server closes a shown notification again at a moment of its own.
  const existing = context.serviceWorkers().find((w) => w.url() === `${service.url}/sw.js`);
  const starting = existing ? null : context.waitForEvent('serviceworker', WAIT);
  await cdp.send('ServiceWorker.startWorker', { scopeURL: `${service.url}/` });
  const worker = existing ?? (await starting)!;
  await worker.evaluate(() => {
    type Options = { body: string; icon: string; tag: string; data: unknown };
    const scope = globalThis as unknown as { registration: { showNotification(title: string, o: Options): Promise<void> }; shownForTest?: Promise<unknown> };
    const reg = scope.registration;
    const real = reg.showNotification.bind(reg);
    scope.shownForTest = new Promise((resolve, reject) => {
      reg.showNotification = (title, o) => real(title, o).then(() => resolve({ title, body: o.body, icon: o.icon, tag: o.tag, data: o.data }), reject);
    });
  });
  const conj = (await api.get('/api/notifications')).body.find((n: { category: string }) => n.category === 'conjunction');
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: service.url, registrationId: reg.registrationId, data: pushPayload(conj) });
  const shown = await Promise.race([
    worker.evaluate(() => (globalThis as unknown as { shownForTest: Promise<unknown> }).shownForTest),
    new Promise((resolve) => setTimeout(() => resolve('not shown within 20 s'), WAIT.timeout).unref()),
  ]);
  t.strictSame(shown, {
    title: conj.title,
    body: conj.body,
    icon: `${service.url}/icon.png`,
    tag: `notification-${conj.id}`,
    data: { url: 'https://celestrak.org/SOCRATES/', notification_id: conj.id, category: 'conjunction' },
  }, 'the push was shown with title, body, icon, tag and click data');
  const icon = await fetch(`${service.url}/icon.png`);
  t.equal(icon.headers.get('content-type'), 'image/png', 'the icon is served');

  // Opened from a notification (its url): the entry is pointed out and has the focus.
  await page.goto(`${service.url}/?notification=${firstId}`);
  await ready(page);
  t.equal(await page.evaluate(() => document.activeElement?.id), `n-${firstId}`, 'the entry has the focus');
  t.match(await attr(page, `#n-${firstId}`, 'class'), /highlight/);

  await screenshot(page, 'space-subscribe.png');
  t.equal(refused(problems, 422), 1, 'the one refused save is the only failed request');
  t.strictSame(problems.filter((p) => !p.includes('status of 422')), [], 'no page errors and no other console errors');
});

t.test('at phone width the page fits, and refused permission is explained', async (t) => {
  const { service } = await startService(t);
  const { page, problems } = await openPage(t, { width: 390, height: 760 });
  await page.goto(`${service.url}/?notification=1`);
  await ready(page);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  t.ok(width <= 390, `no horizontal scrolling (${width} px)`);
  await page.click('#pref-global-launch summary');
  const box = await page.locator('#pref-global-launch button[type="submit"]').boundingBox();
  t.ok(box && box.x >= 0 && box.x + box.width <= 390, `the Save button is on screen: ${JSON.stringify(box)}`);
  // No permission granted: headless Chromium answers "denied" without asking.
  await page.click('#subscribe');
  await page.waitForFunction(() => ['denied', 'off'].includes(document.getElementById('push-status')?.dataset.state ?? ''), null, WAIT);
  t.match(await page.locator('#push-status').innerText(), /blocked for this site|Permission was not given/);
  const file = await screenshot(page, 'space-subscribe-narrow.png');
  t.ok(fs.statSync(file).size > 10_000, 'a screenshot was kept');
  t.strictSame(problems, []);
});

t.test('without VAPID keys the page says push is not configured and still logs and sends tests', async (t) => {
  const { service } = await startService(t, { vapid: null });
  const { page, problems } = await openPage(t);
  await page.goto(`${service.url}/`);
  await ready(page);
  t.equal(await attr(page, '#push-status', 'data-state'), 'not-configured');
  t.match(await page.locator('#push-status').innerText(), /Push is not configured on the service: .*VAPID.*SPACE_ERR_VAPID_NOT_CONFIGURED/);
  t.equal(await page.locator('#subscribe').isDisabled(), true);
  await page.click('#send-test');
  await page.waitForFunction(() => document.querySelectorAll('#log li.entry').length === 1, null, WAIT);
  t.equal(refused(problems, 503), 1, 'the vapid-key 503 is the only failed request');
  t.strictSame(problems.filter((p) => !p.includes('status of 503')), []);
});

t.test('"Show older" pages through the log by keyset, without gaps or repeats while new entries arrive live', async (t) => {
  const { service, api } = await startService(t);
  for (let i = 0; i < 60; i++) await service.notifier.sendTest();
  const { page, problems } = await openPage(t);
  await page.goto(`${service.url}/`);
  await ready(page);
  t.equal(await entryCount(page), 50, 'the first page');
  t.equal(await page.locator('#more').isVisible(), true);
  await api.post('/api/notifications/test'); // arrives over the feed before the next page is asked for
  await page.waitForFunction(() => document.querySelectorAll('#log li.entry').length === 51, null, WAIT);
  const asked: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/notifications?')) asked.push(r.url().replace(service.url, ''));
  });
  await page.click('#more');
  await page.waitForFunction(() => document.querySelectorAll('#log li.entry').length === 61, null, WAIT);
  t.strictSame(asked, ['/api/notifications?limit=50&before_id=11'], 'the older page is asked for by keyset, from the oldest entry shown');
  const ids = await page.locator('#log li.entry').evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.id)));
  t.strictSame(ids, Array.from({ length: 61 }, (_, i) => 61 - i), 'every entry once, newest first');
  t.equal(await page.locator('#more').isVisible(), false, 'no older entries left');
  t.strictSame(problems, []);
});

t.test('behind a proxy that serves the service under a path prefix the page, its feed and its worker stay under the prefix', async (t) => {
  const { service } = await startService(t);
  const base = await startPrefixProxy(t, service.url, '/space');
  const { context, page, problems } = await openPage(t);
  await context.grantPermissions(['notifications'], { origin: new URL(base).origin });
  await page.goto(`${base}/`);
  await ready(page); // the log, the preferences, the VAPID key and the live feed, all through the proxy
  await page.click('#send-test');
  await page.waitForFunction(() => document.querySelectorAll('#log li.entry').length === 1, null, WAIT);
  t.pass('the test entry came back over the proxied feed');
  const scope = await page.evaluate(async () => {
    await navigator.serviceWorker.register('sw.js');
    return (await navigator.serviceWorker.ready).scope;
  });
  t.equal(scope, `${base}/`, 'the worker registers under the prefix');
  t.strictSame(problems, []);
});

t.test('when the service restarts the page says it is offline, reconnects, and shows what was written meanwhile', async (t) => {
  const first = await startService(t);
  const { page, problems } = await openPage(t);
  await page.goto(`${first.service.url}/`);
  await ready(page);
  await first.stop();
  await page.waitForFunction(() => document.getElementById('link')?.dataset.link === 'down', null, WAIT);
  t.match(await page.locator('#link').innerText(), /offline, reconnecting/);
  // An entry written to the database while the service is down is never broadcast: only the page's reload on reconnect can show it.
  const db = openDatabase(first.dbPath);
  new Store(db).logNotification({ category: 'test', title: 'Written while the page was away', body: 'b', data: {}, location_id: null }, false, new Date('2026-11-21T12:01:00Z'));
  db.close();
  const again = await startSpaceService({ ...first.config, port: Number(new URL(first.service.url).port) }, { clock: new ManualClock('2026-11-21T12:05:00Z'), timers: false });
  t.teardown(() => again.close());
  await page.waitForFunction(() => document.getElementById('link')?.dataset.link === 'up' && document.querySelectorAll('#log li.entry').length === 1, null, WAIT);
  t.equal(await page.locator('#log li.entry .title').innerText(), 'Written while the page was away');
  t.equal(await attr(page, '#unread', 'data-count'), '1', 'the count from the new hello');
  t.strictSame(problems.filter((p) => !/ERR_CONNECTION_REFUSED|WebSocket connection/.test(p)), [], 'nothing but the failed reconnection attempts');
});

t.test('opened over plain http on a name other than localhost (a phone on the LAN) the page says push needs https', async (t) => {
  const { service, api } = await startService(t);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'space-chromium-'));
  // Debian's Chromium as in test/helpers/browser.ts, with a name that resolves here but is not a secure context.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--host-resolver-rules=MAP space.test 127.0.0.1'],
  });
  t.teardown(async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`http://space.test:${new URL(service.url).port}/`);
  await ready(page);
  t.equal(await page.evaluate(() => window.isSecureContext), false);
  t.equal(await attr(page, '#push-status', 'data-state'), 'unsupported');
  t.equal(await page.locator('#push-status').innerText(), 'Push needs a secure page: open it over https, or as http://localhost on this machine.');
  t.equal(await page.locator('#subscribe').isDisabled(), true);
  // Everything else still works there: a preference opened and saved from the keyboard alone.
  await page.focus('#pref-global-launch summary');
  await page.keyboard.press('Enter');
  t.equal(await page.locator('#pref-global-launch').getAttribute('open'), '', 'Enter opens the preference');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Space');
  t.equal(await page.isChecked('#pref-global-launch-enabled'), false, 'Tab reaches "enabled", Space unticks it');
  await page.keyboard.press('Tab');
  await page.keyboard.type('90, 15');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('pref-global-launch-status')?.textContent === 'Saved.', null, WAIT);
  t.match((await api.get('/api/notifications/preferences')).body, [{ category: 'launch', is_enabled: false, lead_times: [90, 15] }]);
});
