/**
 * The live notification feed: a WebSocket endpoint at `/api/notifications/ws`
 * on the service's HTTP server. Each message is one JSON text frame:
 *   on connect  {"type": "hello", "unread_count": <int>}
 *   per entry   {"type": "notification", "notification": <log entry>}
 * (the log entry exactly as GET /api/notifications shows it). Clients that
 * stop answering pings are dropped.
 */
import type http from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import type { NotificationEntry } from './store';

export const FEED_PATH = '/api/notifications/ws';

export type FeedMessage = { type: 'hello'; unread_count: number } | { type: 'notification'; notification: NotificationEntry };

export class LiveFeed {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private readonly alive = new WeakSet<WebSocket>();
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(private readonly unreadCount: () => number) {}

  /** Accepts upgrades to FEED_PATH on `server`; other upgrade requests are refused with 404. */
  attach(server: http.Server, heartbeatMs = 30_000): void {
    server.on('upgrade', (req, socket, head) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== FEED_PATH) {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":"no WebSocket here; the feed is at /api/notifications/ws","code":"SPACE_ERR_NOT_FOUND"}');
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
