/**
 * Live status over WebSocket at LIVE_STATUS_PATH (`ws` library).
 *
 * What a client gets (JSON text messages; docs/api.md has examples):
 * - on connect: a `config` message, then a `status` message;
 * - while anything moves: a `status` message every `intervalMs` (50 ms, 20 a
 *   second), on a timer that runs only while something moves and someone listens;
 * - otherwise: a `status` message on every change the positioner reports
 *   (Positioner.onChange: move, arrival, stop, homing, fault) whose content
 *   differs from the last one sent, and a `config` message when the settings change;
 * - with a scanner: the current scan on connect, a `scan` message on its
 *   progress (at most every 100 ms, and on every state change) and a `sample`
 *   message for each new sample.
 *
 * The feed is driven by onChange alone, so any new state or fault the
 * firmware learns to report reaches clients with no change here.
 *
 * Fan-out: each snapshot is serialised once; a client's message is a short
 * per-connection prefix (type, seq) glued to the shared JSON. A client whose
 * socket has more than `maxBufferedBytes` unsent is skipped for that message
 * (status is a snapshot: the next one supersedes it), so one slow reader
 * costs the others nothing and the server's memory stays bounded; the skip
 * shows as a gap in that connection's `seq`.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Positioner } from '../firmware/positioner';
import type { ScanEvent, Scanner } from '../firmware/scan';
import { sampleBody, scanBody } from './scan-routes';
import { configBody, statusBody } from './status-bodies';

export const LIVE_STATUS_PATH = '/ws';

export interface LiveStatusOptions {
  /** Period of status messages while moving, ms (default 50: 20 a second). */
  intervalMs?: number;
  /** A client with more than this many bytes still unsent skips messages (default 256 KiB). */
  maxBufferedBytes?: number;
  /** Ping period; a client that has not answered the previous ping is dropped (default 30 s). */
  heartbeatMs?: number;
  /** Scans to report: a `scan` message on progress (at most every `scanIntervalMs`, and on every state change) and a `sample` message per sample. */
  scanner?: Scanner;
  /** Shortest time between two `scan` progress messages of the same state, ms (default 100). */
  scanIntervalMs?: number;
}

type MessageType = 'status' | 'config' | 'scan' | 'sample';

interface Client {
  ws: WebSocket;
  seq: number;
  alive: boolean;
}

export class LiveStatus {
  private readonly wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: 4096 });
  private readonly clients = new Set<Client>();
  private readonly intervalMs: number;
  private readonly maxBufferedBytes: number;
  private ticker: NodeJS.Timeout | null = null;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private lastStatusJson = '';
  private lastConfigJson = '';
  private readonly scanIntervalMs: number;
  private lastScan: { state: string; atMs: number } | null = null;
  private scanTrailer: NodeJS.Timeout | null = null;
  private pendingScanJson: string | null = null;
  private readonly unsubscribeScan: () => void;
  /** Messages sent and skipped since start (for benchmarks and diagnostics). */
  readonly counters = { sent: 0, skipped: 0 };

  private readonly scanner: Scanner | undefined;

  constructor(
    private readonly positioner: Positioner,
    opts: LiveStatusOptions = {},
  ) {
    this.scanner = opts.scanner;
    this.intervalMs = opts.intervalMs ?? 50;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 256 * 1024;
    this.unsubscribe = positioner.onChange(() => this.onChange());
    this.heartbeat = setInterval(() => this.ping(), opts.heartbeatMs ?? 30_000);
    this.heartbeat.unref();
    this.lastConfigJson = JSON.stringify(configBody(positioner));
    this.scanIntervalMs = opts.scanIntervalMs ?? 100;
    this.unsubscribeScan = opts.scanner?.onEvent((e) => this.onScanEvent(e)) ?? (() => undefined);
  }

  /**
   * Scan progress: every state change at once; progress within a state at most
   * every scanIntervalMs, the latest one sent when the interval ends. Samples
   * are sent as they come (each is new data, never superseded).
   */
  private onScanEvent(event: ScanEvent): void {
    if (event.type === 'sample') {
      const json = JSON.stringify({ scan_id: event.scanId, ...sampleBody(event.sample) });
      this.broadcast('sample', json);
      return;
    }
    const json = JSON.stringify(scanBody(event.scan));
    const nowMs = Date.now();
    const last = this.lastScan;
    if (!last || last.state !== event.scan.state || nowMs - last.atMs >= this.scanIntervalMs) {
      this.sendScan(json, event.scan.state, nowMs);
      return;
    }
    this.pendingScanJson = json;
    if (!this.scanTrailer) {
      this.scanTrailer = setTimeout(() => {
        this.scanTrailer = null;
        const pending = this.pendingScanJson;
        if (pending) this.sendScan(pending, this.lastScan?.state ?? '', Date.now());
      }, this.scanIntervalMs - (nowMs - last.atMs));
      this.scanTrailer.unref();
    }
  }

  private sendScan(json: string, state: string, atMs: number): void {
    this.pendingScanJson = null;
    if (this.scanTrailer) clearTimeout(this.scanTrailer);
    this.scanTrailer = null;
    this.lastScan = { state, atMs };
    this.broadcast('scan', json);
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Takes WebSocket upgrades on LIVE_STATUS_PATH; any other upgrade is answered 404 and closed. */
  attach(server: http.Server): void {
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== LIVE_STATUS_PATH) {
        const body = JSON.stringify({ error: `no WebSocket endpoint at ${path}; the live status feed is at ${LIVE_STATUS_PATH}` });
        socket.end(`HTTP/1.1 404 Not Found\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nPositioner-Error-Code: API_ERR_NOT_FOUND\r\nConnection: close\r\n\r\n${body}`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.welcome(ws));
    });
  }

  /** Closes every client connection (1012 service restart) and keeps serving: clients reconnect. */
  disconnectAll(): void {
    for (const c of this.clients) c.ws.close(1012, 'service restart; reconnect');
  }

  /** Closes every client (1001 going away) and stops the timers. */
  close(): void {
    this.unsubscribe();
    this.unsubscribeScan();
    if (this.scanTrailer) clearTimeout(this.scanTrailer);
    this.stopTicker();
    clearInterval(this.heartbeat);
    for (const c of this.clients) c.ws.close(1001, 'server shutting down');
    this.clients.clear();
    this.wss.close();
  }

  private welcome(ws: WebSocket): void {
    const client: Client = { ws, seq: 0, alive: true };
    this.clients.add(client);
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('message', () => {
      ws.send(JSON.stringify({ type: 'error', error: 'the live status feed is read-only; send commands to the HTTP API (see /openapi.json)' }));
    });
    ws.on('close', () => {
      this.clients.delete(client);
      if (this.clients.size === 0) this.stopTicker();
    });
    ws.on('error', () => ws.terminate());
    const status = this.snapshot();
    this.send(client, 'config', this.lastConfigJson);
    this.send(client, 'status', status);
    const scan = this.scanner?.current();
    if (scan) this.send(client, 'scan', JSON.stringify(scanBody(scan)));
    if (this.positioner.status().moving) this.startTicker();
  }

  private onChange(): void {
    const config = JSON.stringify(configBody(this.positioner));
    if (config !== this.lastConfigJson) {
      this.lastConfigJson = config;
      this.broadcast('config', config);
    }
    const status = this.snapshot();
    if (status !== this.lastStatusJson) {
      this.lastStatusJson = status;
      this.broadcast('status', status);
    }
    if (this.positioner.status().moving) this.startTicker();
  }

  private tick(): void {
    const s = this.positioner.status();
    const status = JSON.stringify(statusBody(s));
    // While moving every tick is sent (the position changes); at rest only a change is.
    if (s.moving || status !== this.lastStatusJson) {
      this.lastStatusJson = status;
      this.broadcast('status', status);
    }
    if (!s.moving) this.stopTicker();
  }

  private snapshot(): string {
    return JSON.stringify(statusBody(this.positioner.status()));
  }

  private startTicker(): void {
    if (this.ticker || this.clients.size === 0) return;
    this.ticker = setInterval(() => this.tick(), this.intervalMs);
  }

  private stopTicker(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }

  private broadcast(type: MessageType, json: string): void {
    for (const c of this.clients) this.send(c, type, json);
  }

  /** `json` is an object's JSON; the message is that object with type, seq (and sent_at_ms for status) in front. */
  private send(c: Client, type: MessageType, json: string): void {
    if (c.ws.readyState !== WebSocket.OPEN) return;
    c.seq += 1;
    if (c.ws.bufferedAmount > this.maxBufferedBytes) {
      this.counters.skipped += 1;
      return;
    }
    const stamp = type === 'status' ? `,"sent_at_ms":${Date.now()}` : '';
    const rest = json.length > 2 ? `,${json.slice(1)}` : '}';
    c.ws.send(`{"type":"${type}","seq":${c.seq}${stamp}${rest}`);
    this.counters.sent += 1;
  }

  private ping(): void {
    for (const c of this.clients) {
      if (!c.alive) {
        c.ws.terminate();
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }
}
