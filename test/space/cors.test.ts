/**
 * CORS_ORIGINS (api/space/cors.ts) and SUBSCRIBE_PAGE on the real service:
 * plain HTTP requests with and without a listed Origin, preflights, the
 * configuration's checks, the page turned off; and, in headless Chromium, a
 * page on another origin that may (listed) or may not (not listed) call the
 * API, which is what the headers are for.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { WebSocket } from 'ws';
import { FEED_PATH } from '../../api/space/ws-feed';
import { ConfigError, configFromEnv } from '../../api/space/config';
import { openPage } from '../helpers/browser';
import { assertSpaceError, startService } from '../helpers/space';

const ALLOWED = 'https://app.example';
const corsHeaders = (h: Headers) => [...h.keys()].filter((k) => k.startsWith('access-control-'));

t.test('a listed origin gets Access-Control-Allow-Origin on answers and errors; others get no CORS header', async (t) => {
  const { api } = await startService(t, { env: { CORS_ORIGINS: `${ALLOWED}, http://localhost:5173` } });
  const ok = await api.send('GET', '/api/notifications', { headers: { origin: ALLOWED } });
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('access-control-allow-origin'), ALLOWED);
  t.equal(ok.headers.get('access-control-expose-headers'), 'Link', 'the page may read the Link to the next page');
  t.match(ok.headers.get('vary') ?? '', /Origin/, 'Vary: Origin, so a cache keeps the answers apart');
  t.equal((await api.send('GET', '/api/notifications/unread-count', { headers: { origin: 'http://localhost:5173' } })).headers.get('access-control-allow-origin'), 'http://localhost:5173', 'every listed origin');
  const err = await api.send('POST', '/api/notifications/999/read', { headers: { origin: ALLOWED } });
  assertSpaceError(t, err, 404, 'SPACE_ERR_NOT_FOUND', 'an error for a listed origin');
  t.equal(err.headers.get('access-control-allow-origin'), ALLOWED, 'errors are readable by the listed page too');

  for (const origin of ['https://evil.example', 'https://app.example.evil.example', 'http://app.example', 'https://app.example:8443', 'null']) {
    const r = await api.send('GET', '/api/notifications', { headers: { origin } });
    t.equal(r.status, 200, `${origin}: served as before`);
    t.strictSame(corsHeaders(r.headers), [], `${origin}: no CORS header`);
  }
  t.strictSame(corsHeaders((await api.get('/api/notifications')).headers), [], 'no Origin, no CORS header');
});

t.test('the live feed opens for the service\'s own pages, listed origins and clients outside a browser; other pages get 403', async (t) => {
  const { service } = await startService(t, { env: { CORS_ORIGINS: ALLOWED } });
  const feedUrl = `${service.url.replace('http', 'ws')}${FEED_PATH}`;
  const port = new URL(service.url).port;
  /** The handshake's outcome: 'hello' when the feed's first message came, else the refusal's status and body. */
  const open = (headers: Record<string, string>) =>
    new Promise<{ hello: boolean; status?: number; body?: string }>((resolve) => {
      const ws = new WebSocket(feedUrl, { headers });
      ws.once('message', (d) => {
        ws.terminate();
        resolve({ hello: (JSON.parse(String(d)) as { type: string }).type === 'hello' });
      });
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => resolve({ hello: false, status: res.statusCode, body }));
      });
      ws.once('error', () => resolve({ hello: false }));
    });

  t.equal((await open({})).hello, true, 'no Origin (not a browser): accepted');
  t.equal((await open({ origin: `http://127.0.0.1:${port}` })).hello, true, 'the service\'s own origin');
  t.equal((await open({ origin: ALLOWED })).hello, true, 'a listed origin');
  // Behind a proxy that names the public host in X-Forwarded-Host (and its own upstream in Host).
  t.equal((await open({ origin: 'https://space.example', 'x-forwarded-host': 'space.example' })).hello, true, 'the public origin behind a proxy');
  t.equal((await open({ origin: 'https://space.example:443', host: 'space.example' })).hello, true, 'a default port written out or left out compares equal');

  // The accepted clients above were closed; their server ends may still be going: refusals must only never add one.
  const clientsBefore = service.feed.clientCount;
  for (const origin of ['https://evil.example', `http://127.0.0.1:${Number(port) + 1}`, `http://localhost:${port}.evil.example`, 'null', 'file://']) {
    const r = await open({ origin });
    t.equal(r.hello, false, `${origin}: no feed`);
    t.equal(r.status, 403, `${origin}: 403`);
    const body = JSON.parse(r.body ?? '{}') as { error: string; code: string };
    t.equal(body.code, 'SPACE_ERR_FORBIDDEN_ORIGIN');
    t.match(body.error, /CORS_ORIGINS/, 'the error names the setting that lets a page in');
  }
  t.ok(service.feed.clientCount <= clientsBefore, 'no refused handshake became a client');
});

t.test('a preflight from a listed origin is 204 with the path\'s methods; from another origin it is refused as before', async (t) => {
  const { api } = await startService(t, { env: { CORS_ORIGINS: ALLOWED } });
  const preflight = (path: string, origin: string, extra: Record<string, string> = {}) =>
    api.send('OPTIONS', path, { headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type', ...extra } });

  const r = await preflight('/api/notifications/preferences/global/launch', ALLOWED);
  t.equal(r.status, 204);
  t.equal(r.text, '');
  t.equal(r.headers.get('access-control-allow-origin'), ALLOWED);
  t.equal(r.headers.get('access-control-allow-methods'), 'PUT, DELETE');
  t.equal(r.headers.get('access-control-allow-headers'), 'Content-Type');
  t.equal(r.headers.get('access-control-max-age'), '600');
  t.equal(r.headers.get('access-control-allow-private-network'), null, 'only when asked');
  t.equal((await preflight('/api/notifications/test', ALLOWED)).headers.get('access-control-allow-methods'), 'POST');
  t.equal((await preflight('/api/notifications/subscribe/3', ALLOWED)).headers.get('access-control-allow-methods'), 'DELETE');
  t.equal((await preflight('/api/notifications', ALLOWED, { 'access-control-request-private-network': 'true' })).headers.get('access-control-allow-private-network'), 'true', 'Private Network Access');

  const refused = await preflight('/api/notifications/preferences/global/launch', 'https://evil.example');
  assertSpaceError(t, refused, 405, 'SPACE_ERR_METHOD_NOT_ALLOWED', 'a preflight from another origin');
  t.strictSame(corsHeaders(refused.headers), [], 'with no CORS header');
  const notPreflight = await api.send('OPTIONS', '/api/notifications', { headers: { origin: ALLOWED } });
  assertSpaceError(t, notPreflight, 405, 'SPACE_ERR_METHOD_NOT_ALLOWED', 'OPTIONS without Access-Control-Request-Method');
  assertSpaceError(t, await preflight('/api/nope', ALLOWED), 404, 'SPACE_ERR_NOT_FOUND', 'a preflight for an unknown path');
});

t.test('without CORS_ORIGINS nothing changes: no CORS headers, OPTIONS is 405', async (t) => {
  const { api } = await startService(t);
  const r = await api.send('GET', '/api/notifications', { headers: { origin: ALLOWED } });
  t.strictSame(corsHeaders(r.headers), []);
  t.equal(r.headers.get('vary'), null);
  const p = await api.send('OPTIONS', '/api/notifications/test', { headers: { origin: ALLOWED, 'access-control-request-method': 'POST' } });
  assertSpaceError(t, p, 405, 'SPACE_ERR_METHOD_NOT_ALLOWED');
  t.equal(p.headers.get('allow'), 'POST');
});

t.test('CORS_ORIGINS and SUBSCRIBE_PAGE are checked at start', async (t) => {
  t.strictSame(configFromEnv({ CORS_ORIGINS: ' https://a.example ,http://localhost:5173,' }).corsOrigins, ['https://a.example', 'http://localhost:5173']);
  t.strictSame(configFromEnv({}).corsOrigins, []);
  const cases: Array<[string, RegExp]> = [
    ['*', /wildcard is not accepted; list each origin/],
    ['https://a.example/', /use "https:\/\/a\.example"/],
    ['https://A.example', /use "https:\/\/a\.example"/],
    ['https://a.example:443', /use "https:\/\/a\.example"/],
    ['https://a.example/app', /scheme, host and port only/],
    ['ftp://a.example', /not an http\(s\) origin/],
    ['a.example', /not a URL; write an origin such as/],
  ];
  for (const [value, message] of cases) {
    t.throws(() => configFromEnv({ CORS_ORIGINS: value }), { name: 'ConfigError', message: new RegExp(`^CORS_ORIGINS: .*${message.source}`) }, value);
  }
  t.equal(configFromEnv({}).page, true, 'the page is on by default');
  for (const off of ['off', 'OFF', 'false', '0', 'no']) t.equal(configFromEnv({ SUBSCRIBE_PAGE: off }).page, false, off);
  t.throws(() => configFromEnv({ SUBSCRIBE_PAGE: 'maybe' }), new ConfigError('SUBSCRIBE_PAGE must be on or off, got "maybe"'));
});

t.test('the page is served at / with its files and a strict CSP, and SUBSCRIBE_PAGE=off turns it off', async (t) => {
  const on = await startService(t);
  const page = await on.api.get('/');
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.match(page.headers.get('content-security-policy'), /default-src 'none'; script-src 'self'/);
  t.match(page.text, /<title>Space notifications<\/title>/);
  for (const [p, type] of [['/subscribe.js', /^text\/javascript/], ['/sw.js', /^text\/javascript/], ['/subscribe.css', /^text\/css/], ['/icon.png', /^image\/png$/]] as const) {
    const r = await on.api.get(p);
    t.equal(r.status, 200, p);
    t.match(r.headers.get('content-type'), type, p);
  }
  const post = await on.api.send('POST', '/');
  assertSpaceError(t, post, 405, 'SPACE_ERR_METHOD_NOT_ALLOWED', 'POST /');
  t.equal(post.headers.get('allow'), 'GET');

  const off = await startService(t, { env: { SUBSCRIBE_PAGE: 'off' } });
  for (const p of ['/', '/index.html', '/sw.js', '/subscribe.js', '/icon.png']) {
    const r = await off.api.get(p);
    assertSpaceError(t, r, 404, 'SPACE_ERR_NOT_FOUND', `${p} with the page off`);
    t.match(r.body.error, /subscribe page is turned off \(SUBSCRIBE_PAGE=off\)/, `${p}: says why`);
  }
  t.equal((await off.api.get('/api/notifications')).status, 200, 'the API still answers');
});

t.test('in Chromium a page on a listed origin may call the API, one on another origin may not', async (t) => {
  const { page, problems } = await openPage(t);
  // A page on its own origin (another port) that calls the service named in its #fragment with a JSON PUT, which needs a preflight.
  // Its origin is only known once its server listens: it starts first, then the services that list it or not.
  const pageServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>elsewhere</title><script>
window.tryPut = async () => {
  try {
    const r = await fetch(location.hash.slice(1) + '/api/notifications/preferences/global/launch', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ lead_times: [30] }) });
    return 'status ' + r.status + ' ' + (await r.json()).category;
  } catch (e) { return 'blocked: ' + e.name; }
};
window.nextPage = async () => (await fetch(location.hash.slice(1) + '/api/notifications?limit=1')).headers.get('link');
</script>`);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => {
    pageServer.close(() => resolve());
    pageServer.closeAllConnections();
  }));
  const pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;

  const listed = await startService(t, { env: { CORS_ORIGINS: pageOrigin } });
  await page.goto(`${pageOrigin}/#${listed.service.url}`);
  t.equal(await page.evaluate(() => (window as unknown as { tryPut(): Promise<string> }).tryPut()), 'status 200 launch', 'the listed page saved a preference');
  t.match((await listed.api.get('/api/notifications/preferences')).body, [{ category: 'launch', lead_times: [30] }]);
  await listed.api.post('/api/notifications/test');
  await listed.api.post('/api/notifications/test');
  t.equal(await page.evaluate(() => (window as unknown as { nextPage(): Promise<string | null> }).nextPage()), '</api/notifications?limit=1&before_id=2>; rel="next"', 'and reads the Link to the next page');

  const unlisted = await startService(t, { env: { CORS_ORIGINS: 'https://someone-else.example' } });
  await page.goto(`${pageOrigin}/#${unlisted.service.url}`);
  t.equal(await page.evaluate(() => (window as unknown as { tryPut(): Promise<string> }).tryPut()), 'blocked: TypeError', 'the browser refused it');
  t.strictSame((await unlisted.api.get('/api/notifications/preferences')).body, [], 'and nothing was saved: the preflight failed, so the PUT was never sent');
  t.ok(problems.some((p) => /CORS policy/.test(p)), 'Chromium names CORS as the reason');
});
