/**
 * The subscribe page's service worker (api/space/web/sw.js) in Node: the file
 * itself runs in a vm context whose `self` is a small fake (the registration,
 * `clients` and the window clients are recorded fakes: a notification click
 * cannot be made in headless Chromium), while `fetch` is the real one against
 * the real service, so "marks it read" is checked on the service's database.
 * browser.test.ts checks the push handler in Chromium itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import t from 'tap';
import { pushPayload } from '../../api/space/delivery';
import { startPrefixProxy } from '../helpers/prefix-proxy';
import { startPushService, startService, type PushSubscriptionJson } from '../helpers/space';

const SOURCE = fs.readFileSync(path.join(__dirname, '..', '..', 'api', 'space', 'web', 'sw.js'), 'utf8');

interface FakeWindow {
  url: string;
  focused: boolean;
  messages: unknown[];
  focus(): Promise<FakeWindow>;
  postMessage(m: unknown): void;
}

function fakeWindow(url: string): FakeWindow {
  const w: FakeWindow = {
    url,
    focused: false,
    messages: [],
    focus: async () => {
      w.focused = true;
      return w;
    },
    postMessage: (m) => w.messages.push(structuredClone(m)), // as postMessage copies it (and into this realm, for strictSame)
  };
  return w;
}

interface ShownNotification {
  title: string;
  options: { body: string; icon?: string; tag?: string; timestamp?: number; data: { url: string; notification_id: number | null; category?: string | null } };
}

type Subscribe = (options: { userVisibleOnly: boolean; applicationServerKey: ArrayBuffer }) => Promise<{ toJSON(): unknown }>;

/** sw.js loaded with `self` a fake worker scope at `scriptUrl`; `windows` are the open window clients; `subscribe` stands for pushManager.subscribe. */
function loadWorker(scriptUrl: string, windows: FakeWindow[] = [], subscribe?: Subscribe) {
  const listeners = new Map<string, (event: unknown) => void>();
  const shown: ShownNotification[] = [];
  const opened: string[] = [];
  const self = {
    location: new URL(scriptUrl),
    registration: {
      scope: new URL('./', scriptUrl).href,
      showNotification: async (title: string, options: ShownNotification['options']) => {
        shown.push({ title, options: structuredClone(options) });
      },
      pushManager: { subscribe: subscribe ?? (async () => Promise.reject(new Error('no push service in this test'))) },
    },
    clients: {
      matchAll: async (q: { type: string; includeUncontrolled: boolean }) => (q.type === 'window' && q.includeUncontrolled ? windows : []),
      openWindow: async (url: string) => {
        opened.push(url);
        return fakeWindow(url);
      },
      claim: async () => {},
    },
    skipWaiting: () => {},
    addEventListener: (type: string, fn: (event: unknown) => void) => listeners.set(type, fn),
  };
  vm.runInContext(SOURCE, vm.createContext({ self, fetch, URL }), { filename: 'sw.js' });

  /** Dispatches an extendable event and waits for what it handed to waitUntil. */
  const dispatch = async (type: string, fields: object) => {
    const waits: Promise<unknown>[] = [];
    listeners.get(type)!({ ...fields, waitUntil: (p: Promise<unknown>) => waits.push(p) });
    t.equal(waits.length, 1, `${type}: the handler keeps the worker alive until it is done`);
    await Promise.all(waits);
  };
  return {
    listeners,
    shown,
    opened,
    push: (text: string) => dispatch('push', { data: { text: () => text } }),
    subscriptionChange: (oldSubscription: unknown, newSubscription: unknown) => dispatch('pushsubscriptionchange', { oldSubscription, newSubscription }),
    click: async (data: unknown) => {
      let closed = false;
      await dispatch('notificationclick', { notification: { data, close: () => (closed = true) } });
      return { closed };
    },
  };
}

t.test('the worker listens for install, activate, push and notificationclick', async (t) => {
  const w = loadWorker('https://space.example/sw.js');
  t.strictSame([...w.listeners.keys()].sort(), ['activate', 'install', 'notificationclick', 'push', 'pushsubscriptionchange']);
});

t.test('a push shows the payload the service builds: title, body, icon, tag, time and the click data', async (t) => {
  const { service, api } = await startService(t);
  await api.put('/api/notifications/preferences/global/neo_approach', {});
  await service.notifier.deliver({ category: 'neo_approach', title: '2026 AB passes at 3.1 LD', body: 'closest on 2026-11-23', data: { url: '/events/neos' }, location_id: null });
  const [entry] = (await api.get('/api/notifications')).body;
  const w = loadWorker(`${service.url}/sw.js`);
  await w.push(pushPayload(entry));
  t.strictSame(w.shown, [
    {
      title: '2026 AB passes at 3.1 LD',
      options: {
        body: 'closest on 2026-11-23',
        data: { url: `${service.url}/events/neos`, notification_id: entry.id, category: 'neo_approach' },
        icon: `${service.url}/icon.png`,
        tag: `notification-${entry.id}`,
        timestamp: Date.parse(entry.sent_at),
      },
    },
  ]);
});

t.test('a push that is not JSON is shown as text and a click on it opens the page', async (t) => {
  const w = loadWorker('https://space.example/sw.js');
  await w.push('plain words');
  t.strictSame(w.shown, [{ title: 'Space notification', options: { body: 'plain words', data: { url: 'https://space.example/', notification_id: null } } }]);
  await w.click(w.shown[0].options.data);
  t.strictSame(w.opened, ['https://space.example/']);
});

t.test('a click with no window open opens the URL and marks the entry read on the service', async (t) => {
  const { api, service } = await startService(t);
  const { notification_id: id } = (await api.post('/api/notifications/test')).body;
  const w = loadWorker(`${service.url}/sw.js`);
  await w.push(pushPayload((await api.get('/api/notifications')).body[0]));
  const { closed } = await w.click(w.shown[0].options.data);
  t.ok(closed, 'the notification is closed');
  t.strictSame(w.opened, [`${service.url}/?notification=${id}`], 'the page opens on the entry');
  t.type((await api.get('/api/notifications')).body[0].read_at, 'string', 'read on the service');
  t.equal((await api.get('/api/notifications/unread-count')).body.count, 0);
});

t.test('a click focuses a window already showing the page instead of opening another, and tells it what was read', async (t) => {
  const { api, service } = await startService(t);
  const { notification_id: id } = (await api.post('/api/notifications/test')).body;
  const page = fakeWindow(`${service.url}/`);
  const elsewhere = fakeWindow('https://other.example/');
  const w = loadWorker(`${service.url}/sw.js`, [elsewhere, page]);
  await w.click({ url: `${service.url}/?notification=${id}`, notification_id: id });
  t.strictSame(w.opened, [], 'no new window');
  t.ok(page.focused, 'the page is focused');
  t.strictSame(page.messages, [{ type: 'show', notification_id: id }, { type: 'read', notification_id: id }], 'it is told to show the entry and that it is read');
  t.equal(elsewhere.focused, false);
  t.type((await api.get('/api/notifications')).body[0].read_at, 'string');
});

t.test('a click on a link elsewhere focuses a window on exactly that URL, or opens it', async (t) => {
  const { api, service } = await startService(t);
  const { notification_id: id } = (await api.post('/api/notifications/test')).body;
  const there = fakeWindow('https://celestrak.org/SOCRATES/');
  const w = loadWorker(`${service.url}/sw.js`, [fakeWindow(`${service.url}/`), there]);
  await w.click({ url: 'https://celestrak.org/SOCRATES/', notification_id: id });
  t.ok(there.focused, 'the window on that URL is focused');
  t.strictSame(w.opened, []);
  const w2 = loadWorker(`${service.url}/sw.js`, [fakeWindow(`${service.url}/`)]);
  await w2.click({ url: 'https://celestrak.org/SOCRATES/', notification_id: id });
  t.strictSame(w2.opened, ['https://celestrak.org/SOCRATES/'], 'else it opens');
});

t.test('a URL that is not http(s) is never opened: the page is, on the entry', async (t) => {
  const w = loadWorker('https://space.example/sw.js');
  for (const url of ['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 42]) {
    await w.push(JSON.stringify({ notification_id: 7, title: 'x', body: 'y', url }));
  }
  t.strictSame(w.shown.map((n) => n.options.data.url), Array(4).fill('https://space.example/?notification=7'));
  await w.push(JSON.stringify({ notification_id: 8, title: 'x', body: 'y', icon: 'http://[' }));
  t.equal(w.shown.length, 5, 'an unreadable icon URL still shows the notification');
  t.notOk('icon' in w.shown[4].options, 'without an icon');
});

t.test('when the service cannot mark it read the click still opens, and open pages are not told it was read', async (t) => {
  const { api, service } = await startService(t);
  const page = fakeWindow(`${service.url}/`);
  const w = loadWorker(`${service.url}/sw.js`, [page]);
  await w.click({ url: `${service.url}/?notification=999`, notification_id: 999 }); // unknown id: 404
  t.ok(page.focused);
  t.strictSame(page.messages, [{ type: 'show', notification_id: 999 }], 'no "read" message');
  await service.close();
  const w2 = loadWorker(`${service.url}/sw.js`);
  await w2.click({ url: `${service.url}/?notification=1`, notification_id: 1 }); // the service is down
  t.strictSame(w2.opened, [`${service.url}/?notification=1`], 'opened anyway');
  void api;
});

t.test('a worker registered with ?api= marks read on that service (a page hosted on another origin)', async (t) => {
  const { api, service } = await startService(t);
  const { notification_id: id } = (await api.post('/api/notifications/test')).body;
  const w = loadWorker(`https://my-site.example/sw.js?api=${encodeURIComponent(`${service.url}/`)}`);
  await w.click({ url: '/?notification=' + id, notification_id: id });
  t.strictSame(w.opened, [`https://my-site.example/?notification=${id}`], 'the URL is on the page’s own origin');
  t.type((await api.get('/api/notifications')).body[0].read_at, 'string', 'read on the service named by ?api=');
});

t.test('pushsubscriptionchange registers the replacement with the service, and pushes reach it', async (t) => {
  const pushService = await startPushService(t);
  const { api, service, config } = await startService(t);
  const key = config.vapid!.publicKey;
  const asBrowserJson = (s: PushSubscriptionJson) => ({ toJSON: () => ({ endpoint: s.endpoint, expirationTime: null, keys: s.keys }) });
  const count = () => (service.db.prepare('SELECT COUNT(*) AS n FROM subscriptions WHERE is_active = 1').get() as { n: number }).n;

  // The browser hands over the new subscription.
  const replacement = await pushService.subscribe(key);
  await loadWorker(`${service.url}/sw.js`).subscriptionChange(null, asBrowserJson(replacement));
  t.equal(count(), 1, 'registered');

  // It hands over none: the worker subscribes again with the old subscription's key.
  const asked: Array<{ userVisibleOnly: boolean; key: string }> = [];
  let second: PushSubscriptionJson | null = null;
  const w = loadWorker(`${service.url}/sw.js`, [], async (options) => {
    asked.push({ userVisibleOnly: options.userVisibleOnly, key: Buffer.from(options.applicationServerKey).toString('base64url') });
    second = await pushService.subscribe(Buffer.from(options.applicationServerKey).toString('base64url'));
    return asBrowserJson(second);
  });
  const oldKey = new Uint8Array(Buffer.from(key, 'base64url')).buffer;
  await w.subscriptionChange({ options: { applicationServerKey: oldKey } }, null);
  t.strictSame(asked, [{ userVisibleOnly: true, key }], 'subscribed with the old key, user-visible');
  t.equal(count(), 2, 'registered');

  // Neither: nothing to do, and nothing thrown.
  await loadWorker(`${service.url}/sw.js`).subscriptionChange(null, null);
  t.equal(count(), 2);

  const r = await api.post('/api/notifications/test');
  t.equal(r.body.sent_count, 2, 'both replacements receive pushes');
  t.equal((await pushService.received(replacement.clientHash)).length, 1);
  t.equal((await pushService.received(second!.clientHash)).length, 1);
});

t.test('under a proxy\'s path prefix the payload\'s relative url and icon, and the read call, stay under the prefix', async (t) => {
  const { api, service } = await startService(t);
  const base = await startPrefixProxy(t, service.url, '/space');
  const { notification_id: id } = (await api.post('/api/notifications/test')).body;
  const w = loadWorker(`${base}/sw.js`);
  await w.push(pushPayload((await api.get('/api/notifications')).body[0]));
  t.equal(w.shown[0].options.icon, `${base}/icon.png`);
  t.equal(w.shown[0].options.data.url, `${base}/?notification=${id}`);
  await w.click(w.shown[0].options.data);
  t.strictSame(w.opened, [`${base}/?notification=${id}`]);
  t.type((await api.get('/api/notifications')).body[0].read_at, 'string', 'marked read through the proxy');
});

t.test('the payload\'s url is the notification\'s own data.url only when it is http(s) or a path on this origin', async (t) => {
  const entry = (data: unknown) => ({ id: 9, category: 'test', title: 't', body: 'b', data_json: JSON.stringify(data), location_id: null, sent_at: '2026-11-21T12:00:00.000Z', read_at: null, push_sent: false });
  const urlOf = (data: unknown) => (JSON.parse(pushPayload(entry(data))) as { url: string }).url;
  t.equal(urlOf({ url: 'https://celestrak.org/SOCRATES/' }), 'https://celestrak.org/SOCRATES/');
  t.equal(urlOf({ url: 'http://example.org/x?y=1' }), 'http://example.org/x?y=1');
  t.equal(urlOf({ url: '/events/neos' }), '/events/neos');
  for (const bad of ['//evil.example/', '/\\evil.example', 'javascript:alert(1)', 'data:text/html,x', 'events', 'https://a b', 42, null]) {
    t.equal(urlOf({ url: bad }), './?notification=9', `${JSON.stringify(bad)}: the page on the entry`);
  }
  t.equal(urlOf({ test: true }), './?notification=9', 'no data.url');
  t.equal(urlOf(null), './?notification=9', 'no data');
  const big = JSON.parse(pushPayload({ ...entry({ url: 'https://example.org/', pad: 'x'.repeat(5000) }) })) as { url: string; icon: string; data: unknown };
  t.strictSame([big.url, big.icon, big.data], ['https://example.org/', './icon.png', null], 'data dropped for size, url and icon kept');
});
