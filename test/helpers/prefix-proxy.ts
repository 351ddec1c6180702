/**
 * A reverse proxy that serves a service under a path prefix
 * (`http://127.0.0.1:<port>/space/…` -> `<target>/…`), WebSocket upgrades
 * included, as nginx or Caddy do with a `location /space/` block. Anything
 * outside the prefix is 404, so a page that reaches for `/api/…` at the
 * root fails here as it would there.
 */
import http from 'node:http';
import net from 'node:net';
import type { Test } from 'tap';
import { listenLocal } from './listen';

export async function startPrefixProxy(t: Test, target: string, prefix = '/space'): Promise<string> {
  const upstream = new URL(target);
  const strip = (url: string | undefined): string | null => {
    const u = url ?? '/';
    return u.startsWith(`${prefix}/`) ? u.slice(prefix.length) : null;
  };
  const server = http.createServer((req, res) => {
    const path = strip(req.url);
    if (path === null) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`only ${prefix}/ is served here`);
      return;
    }
    const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  const tunnels = new Set<net.Socket>();
  server.on('upgrade', (req, socket: net.Socket, head) => {
    const path = strip(req.url);
    if (path === null) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    const conn = net.connect(Number(upstream.port), upstream.hostname, () => {
      const lines = [`${req.method} ${path} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      conn.write(`${lines.join('\r\n')}\r\n\r\n`);
      conn.write(head);
      conn.pipe(socket).pipe(conn);
    });
    for (const s of [conn, socket]) {
      tunnels.add(s);
      s.on('close', () => tunnels.delete(s));
    }
    conn.on('error', () => socket.destroy());
    socket.on('error', () => conn.destroy());
    conn.on('close', () => socket.destroy());
    socket.on('close', () => conn.destroy());
  });
  // Upgraded sockets are no longer the HTTP server's: closing it does not end them.
  const port = await listenLocal(t, server, () => {
    for (const s of tunnels) s.destroy();
  });
  return `http://127.0.0.1:${port}${prefix}`;
}
