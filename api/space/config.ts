/**
 * The service's configuration from environment variables, checked at start
 * so a typo stops the service with a message instead of misbehaving later.
 */
import { checkVapid, DEFAULT_PUSH_OPTIONS, type PushOptions, type VapidConfig } from './push';
import { DEFAULT_UPSTREAMS, type UpstreamConfig } from './events/refresher';
import { originProblem } from './cors';

export interface SpaceConfig {
  host: string;
  port: number;
  databasePath: string;
  vapid: VapidConfig | null;
  push: PushOptions;
  upstream: UpstreamConfig;
  /** Minutes between automatic event refreshes (0 = only on request). */
  refreshMinutes: number;
  /** Seconds between scheduler ticks (lead times, digest). */
  tickSeconds: number;
  /** Days a notification log entry is kept (0 = for ever). */
  retentionDays: number;
  /** Seconds between maintenance runs (retention, WAL checkpoint). */
  maintenanceSeconds: number;
  /** Serve the subscribe page at `/` (SUBSCRIBE_PAGE, default on). */
  page: boolean;
  /** Origins of pages hosted elsewhere that may call the API (CORS_ORIGINS, exact matches). */
  corsOrigins: string[];
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_PORT = 8090;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_DATABASE_PATH = 'space.db';
/** Six hours: SOCRATES updates twice a day and Launch Library 2's free tier allows about 15 calls an hour. */
export const DEFAULT_REFRESH_MINUTES = 360;
/** A year of history; older entries are deleted by the maintenance run. */
export const DEFAULT_RETENTION_DAYS = 365;

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function url(env: NodeJS.ProcessEnv, name: string, dflt: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw;
}

function vapidFrom(env: NodeJS.ProcessEnv): VapidConfig | null {
  const publicKey = env.VAPID_PUBLIC_KEY?.trim();
  const privateKey = env.VAPID_PRIVATE_KEY?.trim();
  if (!publicKey && !privateKey) return null;
  if (!publicKey || !privateKey) throw new ConfigError('set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY (or neither); `space vapid-keys` makes a pair');
  const v = { publicKey, privateKey, subject: env.VAPID_SUBJECT?.trim() || 'mailto:space-service@localhost' };
  try {
    checkVapid(v);
  } catch (e) {
    throw new ConfigError(`VAPID settings rejected: ${(e as Error).message}`);
  }
  return v;
}

function onOff(env: NodeJS.ProcessEnv, name: string, dflt: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return dflt;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off, got "${env[name]}"`);
}

function origins(env: NodeJS.ProcessEnv, name: string): string[] {
  const list = (env[name] ?? '').split(',').map((o) => o.trim()).filter(Boolean);
  for (const o of list) {
    const problem = originProblem(o);
    if (problem) throw new ConfigError(`${name}: ${problem}`);
  }
  return list;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): SpaceConfig {
  return {
    host: env.HOST?.trim() || DEFAULT_HOST,
    port: int(env, 'PORT', DEFAULT_PORT, 0, 65535),
    databasePath: env.DATABASE_PATH?.trim() || DEFAULT_DATABASE_PATH,
    vapid: vapidFrom(env),
    push: {
      ...DEFAULT_PUSH_OPTIONS,
      concurrency: int(env, 'PUSH_CONCURRENCY', DEFAULT_PUSH_OPTIONS.concurrency, 1, 1000),
      timeoutMs: int(env, 'PUSH_TIMEOUT_MS', DEFAULT_PUSH_OPTIONS.timeoutMs, 100, 120_000),
      maxAttempts: int(env, 'PUSH_MAX_ATTEMPTS', DEFAULT_PUSH_OPTIONS.maxAttempts, 1, 10),
      encryptThreads: int(env, 'PUSH_ENCRYPT_THREADS', DEFAULT_PUSH_OPTIONS.encryptThreads, 0, 16),
    },
    upstream: {
      socratesUrl: url(env, 'SOCRATES_URL', DEFAULT_UPSTREAMS.socratesUrl),
      neowsUrl: url(env, 'NEOWS_URL', DEFAULT_UPSTREAMS.neowsUrl),
      nasaApiKey: env.NASA_API_KEY?.trim() || DEFAULT_UPSTREAMS.nasaApiKey,
      ll2AstronautsUrl: url(env, 'LL2_ASTRONAUTS_URL', DEFAULT_UPSTREAMS.ll2AstronautsUrl),
      openNotifyUrl: url(env, 'OPEN_NOTIFY_URL', DEFAULT_UPSTREAMS.openNotifyUrl),
      timeoutMs: int(env, 'UPSTREAM_TIMEOUT_MS', DEFAULT_UPSTREAMS.timeoutMs, 100, 300_000),
      maxBytes: DEFAULT_UPSTREAMS.maxBytes,
      minIntervalSec: int(env, 'UPSTREAM_MIN_INTERVAL_SECONDS', DEFAULT_UPSTREAMS.minIntervalSec, 0, 86_400),
    },
    refreshMinutes: int(env, 'EVENTS_REFRESH_MINUTES', DEFAULT_REFRESH_MINUTES, 0, 7 * 1440),
    tickSeconds: 60,
    retentionDays: int(env, 'NOTIFICATION_RETENTION_DAYS', DEFAULT_RETENTION_DAYS, 0, 36_500),
    maintenanceSeconds: 300,
    page: onOff(env, 'SUBSCRIBE_PAGE', true),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
  };
}
