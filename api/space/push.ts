/**
 * Web Push delivery: payloads encrypted (aes128gcm, api/space/push-crypto.ts)
 * and signed with the server's VAPID key (JWT by `web-push`), sent over
 * kept-alive node:http(s) connections, so that http push services (a local
 * one in tests) and per-request timeouts work.
 *
 * Per subscription: 2xx is delivered; 404/410 mean the subscription is gone
 * and it is deactivated; 429 waits for Retry-After (capped) and 5xx, network
 * errors and timeouts back off exponentially, both up to `maxAttempts`;
 * anything else fails at once. Every failure is counted on the subscription
 * with its last error. Sends run in parallel, at most `concurrency` at once;
 * a fan-out's payloads are encrypted on `encryptThreads` worker threads (the
 * ECDH per message is most of the sender's CPU), the requests sent from the
 * event loop; the outcomes are written in one transaction per round.
 *
 * The VAPID JWT (an ES256 signature, three times the cost of encrypting a
 * payload) is signed once per push-service origin and reused until an hour
 * before it expires, rather than once per push (docs/benchmarks.md).
 */
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import webpush from 'web-push';
import { realSleep, systemClock, type Clock, type Sleep } from './clock';
import { clientKeys, EncryptPool, encryptPayload } from './push-crypto';
import type { PushOutcome, PushResult, PushTarget, Store } from './store';

class PushTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'PushTimeoutError';
  }
}

export interface VapidConfig {
  publicKey: string;
  privateKey: string;
  subject: string;
}

export interface PushOptions {
  concurrency: number;
  timeoutMs: number;
  /** Attempts per subscription, the first included. */
  maxAttempts: number;
  backoffBaseMs: number;
  /** Upper bound of one wait, Retry-After included. */
  maxBackoffMs: number;
  /** Seconds the push service keeps an undelivered message. */
  ttlSec: number;
  /** Worker threads that encrypt a fan-out's messages (0: on the event loop). */
  encryptThreads: number;
}

export const DEFAULT_PUSH_OPTIONS: PushOptions = {
  concurrency: 32,
  timeoutMs: 10_000,
  maxAttempts: 3,
  backoffBaseMs: 1_000,
  maxBackoffMs: 30_000,
  ttlSec: 24 * 3600,
  // One fewer than the cores (the event loop keeps one busy sending), at least one, at most four.
  encryptThreads: Math.min(4, Math.max(1, os.availableParallelism() - 1)),
};

/** A fan-out this small is encrypted on the event loop: the round trip to a worker would cost more than it saves. */
const POOL_MIN_TARGETS = 8;


export interface PushSummary {
  sent: number;
  gone: number;
  failed: number;
  results: PushResult[];
}

/** Keep payloads well under the 4 KB push services accept once encrypted. */
export const MAX_PAYLOAD_BYTES = 3000;

/** A new VAPID key pair (base64url), for `space vapid-keys`. */
export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  return webpush.generateVAPIDKeys();
}

/** Checks a configured pair before the first push needs it; throws with what is wrong. */
export function checkVapid(v: VapidConfig): void {
  webpush.getVapidHeaders('https://push.example/', v.subject, v.publicKey, v.privateKey, 'aes128gcm');
}

/** Retry-After in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: Date): number | undefined {
  if (!header) return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const t = Date.parse(header);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now.getTime());
}

/** Lifetime of a signed VAPID JWT (push services accept up to 24 h). */
const VAPID_JWT_LIFETIME_SEC = 12 * 3600;
/** A cached JWT is replaced this long before it expires. */
const VAPID_JWT_MARGIN_SEC = 3600;

export class PushSender {
  readonly options: PushOptions;
  private readonly sleep: Sleep;
  private readonly vapidHeaders = new Map<string, { authorization: string; expiresSec: number }>();
  /** Kept-alive connections to the push services: a fan-out reuses them instead of a TCP (and TLS) handshake per push. */
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  private pool: EncryptPool | null = null;

  constructor(
    private readonly vapid: VapidConfig | null,
    private readonly store: Store,
    private readonly clock: Clock,
    options: Partial<PushOptions> = {},
    sleep: Sleep = realSleep,
    /**
     * The push services' time: a JWT's expiry and a Retry-After date are read
     * by another machine against real time, so they never follow the injected
     * `clock` (which a test may have set to another day).
     */
    private readonly wallClock: Clock = systemClock,
  ) {
    this.options = { ...DEFAULT_PUSH_OPTIONS, ...options };
    this.sleep = sleep;
  }

  get configured(): boolean {
    return this.vapid !== null;
  }

  /** Sends `payload` to every target, `concurrency` at a time; never throws for a single subscription's failure. */
  async sendAll(targets: readonly PushTarget[], payload: string): Promise<PushSummary> {
    const results: PushResult[] = new Array(targets.length);
    if (!this.vapid || targets.length === 0) return { sent: 0, gone: 0, failed: 0, results: [] };
    const bytes = Buffer.from(payload);
    let pool: EncryptPool | undefined;
    if (this.options.encryptThreads > 0 && targets.length >= POOL_MIN_TARGETS) {
      if (this.pool?.size !== this.options.encryptThreads) {
        void this.pool?.close();
        this.pool = new EncryptPool(this.options.encryptThreads);
      }
      pool = this.pool;
    }
    let next = 0;
    const worker = async () => {
      while (next < targets.length) {
        const i = next++;
        results[i] = await this.sendOne(targets[i], bytes, pool);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, targets.length) }, worker));
    // One transaction for the whole round rather than a commit per subscription.
    this.store.recordPushResults(results, this.clock.now());
    const count = (o: PushOutcome) => results.filter((r) => r.outcome === o).length;
    return { sent: count('sent'), gone: count('gone'), failed: count('failed'), results };
  }

  /** The Authorization header for a push-service origin (the JWT audience), signed at most every 11 hours. */
  private authorization(vapid: VapidConfig, audience: string): string {
    const nowSec = Math.floor(this.wallClock.now().getTime() / 1000);
    const cached = this.vapidHeaders.get(audience);
    if (cached && nowSec < cached.expiresSec - VAPID_JWT_MARGIN_SEC) return cached.authorization;
    const expiresSec = nowSec + VAPID_JWT_LIFETIME_SEC;
    const h = webpush.getVapidHeaders(audience, vapid.subject, vapid.publicKey, vapid.privateKey, 'aes128gcm', expiresSec);
    this.vapidHeaders.set(audience, { authorization: h.Authorization, expiresSec });
    return h.Authorization;
  }

  private backoffMs(attempt: number): number {
    const exp = this.options.backoffBaseMs * 2 ** (attempt - 1);
    // Full jitter on the upper half, so many subscriptions of one failing service do not retry in step.
    return Math.min(this.options.maxBackoffMs, exp / 2 + Math.random() * (exp / 2));
  }

  /** One subscription, with its retries; sendAll() records the outcome on the subscription. */
  async sendOne(target: PushTarget, payload: string | Buffer, pool?: EncryptPool): Promise<PushResult> {
    const vapid = this.vapid;
    if (!vapid) throw new Error('VAPID keys are not configured');
    let url: URL;
    let body: Buffer;
    try {
      url = new URL(target.endpoint);
      const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
      const keys = clientKeys(target.keys.p256dh, target.keys.auth);
      body = pool ? await pool.encrypt(bytes, keys) : encryptPayload(bytes, keys);
    } catch (e) {
      // A bad key or endpoint does not heal by retrying.
      return { subscriptionId: target.id, outcome: 'failed', attempts: 1, error: `cannot encrypt for this subscription: ${(e as Error).message}` };
    }
    const headers = {
      TTL: String(this.options.ttlSec),
      'Content-Encoding': 'aes128gcm',
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(body.length),
      Authorization: this.authorization(vapid, url.origin),
    };
    let lastError = '';
    let lastStatus: number | undefined;
    let attempts = 0;
    for (let attempt = 1; attempt <= this.options.maxAttempts; attempt++) {
      attempts = attempt;
      let wait: number | undefined;
      const r = await this.post(url, headers, body);
      if ('error' in r) {
        lastStatus = undefined;
        lastError = r.error;
        wait = this.backoffMs(attempt);
      } else {
        lastStatus = r.status;
        if (r.status >= 200 && r.status < 300) return { subscriptionId: target.id, outcome: 'sent', attempts: attempt, status: r.status };
        lastError = `push service answered ${r.status}${r.text ? `: ${r.text}` : ''}`;
        if (r.status === 404 || r.status === 410) {
          return { subscriptionId: target.id, outcome: 'gone', attempts: attempt, status: r.status, error: lastError };
        }
        if (r.status === 429) wait = retryAfterMs(r.retryAfter, this.wallClock.now()) ?? this.backoffMs(attempt);
        else if (r.status >= 500) wait = this.backoffMs(attempt);
        else break; // other 4xx: our request is wrong; repeating it will not help
      }
      if (attempt < this.options.maxAttempts) await this.sleep(Math.min(wait ?? 0, this.options.maxBackoffMs));
    }
    return { subscriptionId: target.id, outcome: 'failed', attempts, status: lastStatus, error: lastError };
  }

  /**
   * One POST on a kept-alive connection (node:http, one pool per scheme,
   * `concurrency` sockets per push-service origin), with the timeout on the
   * whole exchange; network errors and timeouts come back as `error`.
   */
  private post(url: URL, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string; retryAfter: string | null } | { error: string }> {
    return new Promise((resolve) => {
      const secure = url.protocol === 'https:';
      const agent = secure ? this.agents.https : this.agents.http;
      agent.maxSockets = this.options.concurrency;
      const req = (secure ? https : http).request(url, { method: 'POST', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          // Only the start of an error text is kept; the rest is read and dropped so the connection can be reused.
          if (size < 200) chunks.push(c);
          size += c.length;
        });
        res.on('end', () => {
          clearTimeout(timer);
          const retry = res.headers['retry-after'];
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8', 0, 200), retryAfter: typeof retry === 'string' ? retry : null });
        });
        res.on('error', fail);
      });
      const timer = setTimeout(() => req.destroy(new PushTimeoutError(this.options.timeoutMs)), this.options.timeoutMs);
      function fail(e: Error & { code?: string }) {
        clearTimeout(timer);
        resolve({ error: e instanceof PushTimeoutError ? e.message : `${url.host}: ${e.code ?? e.message}` });
      }
      req.on('error', fail);
      req.end(body);
    });
  }

  /** Closes the kept-alive connections and the encryption threads (the service's close()). */
  async close(): Promise<void> {
    this.agents.http.destroy();
    this.agents.https.destroy();
    await this.pool?.close();
    this.pool = null;
  }
}
