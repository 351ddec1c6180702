/**
 * What a live-state API owes its clients beyond the routes: nothing cached,
 * no 304 for conditional requests, and JSON errors even for requests too
 * broken for the HTTP parser.
 */
import net from 'node:net';
import t from 'tap';
import { serveApi } from '../helpers/http-server';
import { simOnVirtualClock } from '../helpers/sim';

function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (text += d));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(3000, () => reject(new Error(`no answer; got so far: ${text}`)));
  });
}

t.test('GET answers are marked no-store and conditional headers never give a 304', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  for (const path of ['/status', '/config', '/status?fresh=1']) {
    const conditional: Record<string, string>[] = [{ 'If-None-Match': '*' }, { 'If-Modified-Since': new Date(Date.now() + 86400e3).toUTCString() }, {}];
    for (const headers of conditional) {
      const r = await api.send('GET', path, { headers });
      t.equal(r.status, 200, `${path} ${JSON.stringify(headers)}`);
      t.equal(r.headers.get('cache-control'), 'no-store', `${path} is not cacheable`);
      t.type(r.body, 'object', `${path} has a JSON body`);
    }
  }
  const posted = await api.post('/config', { speed: 12 });
  t.equal(posted.headers.get('cache-control'), 'no-store');
});

t.test('requests the HTTP parser rejects get a JSON 400, and the server keeps serving', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const port = Number(new URL(api.baseUrl).port);
  for (const garbage of ['GARBAGE\r\n\r\n', 'GET /status HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n', '\x00\x01\x02\r\n\r\n']) {
    const answer = await rawRequest(port, garbage);
    t.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(garbage));
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    const parsed = JSON.parse(body) as Record<string, unknown>;
    t.same(Object.keys(parsed), ['error']);
    t.match(parsed.error, /malformed HTTP request/);
  }
  const huge = `GET /status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`;
  t.match(await rawRequest(port, huge), /^HTTP\/1\.1 431 [\s\S]*"error":"request headers too large"/);
  t.equal((await api.get('/status')).status, 200, 'still serving');
});
