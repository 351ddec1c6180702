/**
 * Web Push delivery: payloads encrypted (aes128gcm) and signed with the
 * server's VAPID key by `web-push`, sent with fetch so that http push
 * services (a local one in tests) and per-request timeouts work.
 *
 * Per subscription: 2xx is delivered; 404/410 mean the subscription is gone
 * and it is deactivated; 429 waits for Retry-After (capped) and 5xx, network
 * errors and timeouts back off exponentially, both up to `maxAttempts`;
 * anything else fails at once. Every failure is counted on the subscription
 * with its last error. Sends run in parallel, at most `concurrency` at once.
 *
 * The VAPID JWT (an ES256 signature, three times the cost of encrypting a
 * payload) is signed once per push-service origin and reused until an hour
 * before it expires, rather than once per push (docs/benchmarks.md).
 */
import webpush from 'web-push';
import { realSleep, systemClock, type Clock, type Sleep } from './clock';
import type { PushOutcome, PushResult, PushTarget, Store } from './store';

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
}

export const DEFAULT_PUSH_OPTIONS: PushOptions = {
  concurrency: 32,
  timeoutMs: 10_000,
  maxAttempts: 3,
  backoffBaseMs: 1_000,
  maxBackoffMs: 30_000,
  ttlSec: 24 * 3600,
};


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
    let next = 0;
    const worker = async () => {
      while (next < targets.length) {
        const i = next++;
        results[i] = await this.sendOne(targets[i], payload);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, targets.length) }, worker));
    // One transaction for the whole round rather than a commit per subscription.
    this.store.recordPushResults(results, this.clock.now());
    const count = (o: PushOutcome) => results.filter((r) => r.outcome === o).length;
    return { sent: count('sent'), gone: count('gone'), failed: count('failed'), results };
  }

  /** The Authorization header for the endpoint's origin (the JWT audience), signed at most every 11 hours. */
  private authorization(vapid: VapidConfig, endpoint: string): string {
    const audience = new URL(endpoint).origin;
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
  async sendOne(target: PushTarget, payload: string): Promise<PushResult> {
    const vapid = this.vapid;
    if (!vapid) throw new Error('VAPID keys are not configured');
    let lastError = '';
    let lastStatus: number | undefined;
    let attempts = 0;
    for (let attempt = 1; attempt <= this.options.maxAttempts; attempt++) {
      attempts = attempt;
      let wait: number | undefined;
      try {
        const req = webpush.generateRequestDetails(target, payload, {
          // No vapidDetails (and no global setVapidDetails): the JWT is signed here, once per origin.
          headers: { Authorization: this.authorization(vapid, target.endpoint) },
          TTL: this.options.ttlSec,
          contentEncoding: 'aes128gcm',
        });
        const res = await fetch(req.endpoint, {
          method: req.method,
          headers: req.headers as Record<string, string>,
          body: req.body ? new Uint8Array(req.body) : undefined,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        lastStatus = res.status;
        const text = (await res.text().catch(() => '')).slice(0, 200);
        if (res.ok) {
          return { subscriptionId: target.id, outcome: 'sent', attempts: attempt, status: res.status };
        }
        lastError = `push service answered ${res.status}${text ? `: ${text}` : ''}`;
        if (res.status === 404 || res.status === 410) {
          return { subscriptionId: target.id, outcome: 'gone', attempts: attempt, status: res.status, error: lastError };
        }
        if (res.status === 429) wait = retryAfterMs(res.headers.get('retry-after'), this.wallClock.now()) ?? this.backoffMs(attempt);
        else if (res.status >= 500) wait = this.backoffMs(attempt);
        else break; // other 4xx: our request is wrong; repeating it will not help
      } catch (e) {
        const err = e as Error;
        lastStatus = undefined;
        lastError = err.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : `${err.message}${err.cause ? ` (${String((err.cause as Error).message ?? err.cause)})` : ''}`;
        if (!(err instanceof TypeError) && err.name !== 'TimeoutError') break; // encryption or key errors do not heal
        wait = this.backoffMs(attempt);
      }
      if (attempt < this.options.maxAttempts) await this.sleep(Math.min(wait ?? 0, this.options.maxBackoffMs));
    }
    return { subscriptionId: target.id, outcome: 'failed', attempts, status: lastStatus, error: lastError };
  }
}
