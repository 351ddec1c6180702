/**
 * The live notification feed: a WebSocket endpoint at `/api/notifications/ws`
 * on the service's HTTP server. Each message is one JSON text frame:
 *   on connect  {"type": "hello", "unread_count": <int>}
 *   per entry   {"type": "notification", "notification": <log entry>}
 * (the log entry exactly as GET /api/notifications shows it). Clients that
 * stop answering pings are dropped.
 *
 * A browser may open a WebSocket to any site, and the handshake is not
 * subject to CORS: without a check, any page a subscriber visits could read
 * their feed (cross-site WebSocket hijacking). So a handshake that carries an
 * `Origin` (browsers always send one) is accepted only from the service's own
 * origin (its host as the request names it: `Host`, or `X-Forwarded-Host`
 * behind a proxy; a page's script can set neither) or from an origin listed
 * in CORS_ORIGINS; any other gets 403 with a JSON body. Clients outside a
 * browser (no Origin) are accepted, as for the rest of the API.
 */
import type http from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import type { NotificationEntry } from './store';

export const FEED_PATH = '/api/notifications/ws';

export type FeedMessage = { type: 'hello'; unread_count: number } | { type: 'notification'; notification: NotificationEntry };

/** The first value of a request header that may be repeated or comma-joined, trimmed; null when absent. */
function firstValue(h: string | string[] | undefined): string | null {
  const v = Array.isArray(h) ? h[0] : h?.split(',')[0];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

/**
 * Whether a handshake with this Origin may open the feed: none (not a browser),
 * a listed origin, or the service's own (see the header comment).
 */
export function feedOriginAllowed(req: http.IncomingMessage, listed: ReadonlySet<string>): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  if (listed.has(origin)) return true;
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and anything unreadable
  }
  if (o.protocol !== 'http:' && o.protocol !== 'https:') return false;
  for (const host of [firstValue(req.headers.host), firstValue(req.headers['x-forwarded-host'])]) {
    if (host === null) continue;
    try {
      // The named host read with the origin's scheme, so that a default port written out or left out compares equal.
      if (new URL(`${o.protocol}//${host}`).host === o.host) return true;
    } catch {
      // not a host: no match
    }
  }
  return false;
}

export class LiveFeed {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private readonly alive = new WeakSet<WebSocket>();
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly origins: ReadonlySet<string>;

  /** `corsOrigins`: the origins of pages hosted elsewhere that may open the feed (CORS_ORIGINS). */
  constructor(
    private readonly unreadCount: () => number,
    corsOrigins: readonly string[] = [],
  ) {
    this.origins = new Set(corsOrigins);
  }

  /** Accepts upgrades to FEED_PATH on `server`; other upgrade requests are refused with 404. */
  attach(server: http.Server, heartbeatMs = 30_000): void {
    server.on('upgrade', (req, socket, head) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== FEED_PATH) {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":"no WebSocket here; the feed is at /api/notifications/ws","code":"SPACE_ERR_NOT_FOUND"}');
        return;
      }
      if (!feedOriginAllowed(req, this.origins)) {
        const body = JSON.stringify({
          error: `the live feed does not accept pages from ${String(req.headers.origin)}; a page hosted on another origin must be listed in CORS_ORIGINS (docs/space.md)`,
          code: 'SPACE_ERR_FORBIDDEN_ORIGIN',
        });
        socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.welcome(ws));
    });
    this.heartbeat = setInterval(() => this.sweep(), heartbeatMs);
    this.heartbeat.unref();
  }

  get clientCount(): number {
    return this.wss.clients.size;
  }

  broadcast(entry: NotificationEntry): void {
    const text = JSON.stringify({ type: 'notification', notification: entry } satisfies FeedMessage);
    for (const ws of this.wss.clients) if (ws.readyState === WebSocket.OPEN) ws.send(text);
  }

  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private welcome(ws: WebSocket): void {
    this.alive.add(ws);
    ws.on('pong', () => this.alive.add(ws));
    ws.on('error', () => ws.terminate());
    ws.send(JSON.stringify({ type: 'hello', unread_count: this.unreadCount() } satisfies FeedMessage));
  }

  private sweep(): void {
    for (const ws of this.wss.clients) {
      if (!this.alive.has(ws)) {
        ws.terminate();
        continue;
      }
      this.alive.delete(ws);
      ws.ping();
    }
  }
}
