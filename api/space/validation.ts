/**
 * Validation of every external input of the HTTP API, in one place: the
 * JSON schemas (ajv) for the subscribe and preference bodies, and the checks
 * a schema cannot express (an IANA time zone, a cron expression that a real
 * cron parser accepts, the keys of a push subscription). Every failure is a
 * SpaceError with code SPACE_ERR_INVALID naming the field.
 */
import Ajv, { type ErrorObject } from 'ajv';
import { Cron } from 'croner';
import { SpaceError } from './errors';
import type { PreferenceFields } from './store';

export const LIMITS = {
  pageDefault: 50,
  pageMax: 200,
  leadTimesMax: 10,
  leadTimeMinutesMin: 1,
  leadTimeMinutesMax: 10080,
  minAltitudeMin: 0,
  minAltitudeMax: 90,
  configKeysMax: 20,
  endpointMaxLength: 2048,
  userAgentMaxLength: 512,
  cronMaxLength: 128,
} as const;

export const PREFERENCE_DEFAULTS: PreferenceFields = {
  is_enabled: true,
  lead_times: null,
  schedule_cron: null,
  min_altitude: 10.0,
  timezone: 'UTC',
  config: null,
  quiet_start: null,
  quiet_end: null,
};

const HHMM = '^([01][0-9]|2[0-3]):[0-5][0-9]$';

const subscribeSchema = {
  type: 'object',
  required: ['endpoint', 'keys'],
  additionalProperties: false,
  properties: {
    endpoint: { type: 'string', minLength: 1, maxLength: LIMITS.endpointMaxLength },
    keys: {
      type: 'object',
      required: ['p256dh', 'auth'],
      additionalProperties: false,
      properties: {
        p256dh: { type: 'string', minLength: 1, maxLength: 200 },
        auth: { type: 'string', minLength: 1, maxLength: 100 },
      },
    },
    user_agent: { type: ['string', 'null'], maxLength: LIMITS.userAgentMaxLength },
    // PushSubscription.toJSON() carries it; accepted so a browser's object can be posted as is.
    expirationTime: { type: ['number', 'null'] },
  },
} as const;

const preferenceSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    is_enabled: { type: 'boolean' },
    lead_times: {
      type: ['array', 'null'],
      maxItems: LIMITS.leadTimesMax,
      items: { type: 'integer', minimum: LIMITS.leadTimeMinutesMin, maximum: LIMITS.leadTimeMinutesMax },
    },
    schedule_cron: { type: ['string', 'null'], minLength: 1, maxLength: LIMITS.cronMaxLength },
    min_altitude: { type: 'number', minimum: LIMITS.minAltitudeMin, maximum: LIMITS.minAltitudeMax },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
    config: { type: ['object', 'null'], maxProperties: LIMITS.configKeysMax },
    quiet_start: { type: ['string', 'null'], pattern: HHMM },
    quiet_end: { type: ['string', 'null'], pattern: HHMM },
  },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const validateSubscribe = ajv.compile(subscribeSchema);
const validatePreference = ajv.compile(preferenceSchema);

/** One readable sentence for the first ajv error, naming the field. */
function describe(err: ErrorObject | undefined, what: string): string {
  if (!err) return `invalid ${what}`;
  const field = err.instancePath ? err.instancePath.slice(1).replace(/\//g, '.') : what;
  switch (err.keyword) {
    case 'additionalProperties':
      return `${what}: unknown field "${(err.params as { additionalProperty: string }).additionalProperty}"`;
    case 'required':
      return `${what}: "${(err.params as { missingProperty: string }).missingProperty}" is required${err.instancePath ? ` in ${field}` : ''}`;
    case 'pattern':
      return `${field} must be a time HH:MM (00:00 to 23:59)`;
    case 'maxItems':
      return `${field} may hold at most ${(err.params as { limit: number }).limit} entries`;
    case 'maxProperties':
      return `${field} may hold at most ${(err.params as { limit: number }).limit} keys`;
    default:
      return `${field} ${err.message ?? 'is invalid'}`;
  }
}

export interface SubscribeInput {
  endpoint: string;
  p256dh: string;
  auth: string;
  user_agent: string | null;
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function base64UrlBytes(s: string): Buffer | undefined {
  if (!BASE64URL.test(s)) return undefined;
  return Buffer.from(s.replace(/=+$/, ''), 'base64url');
}

/** The subscribe body: a push endpoint (http or https URL) and the client's P-256 key and 16-byte auth secret. */
export function parseSubscribe(body: unknown): SubscribeInput {
  if (!validateSubscribe(body)) throw new SpaceError('SPACE_ERR_INVALID', describe(validateSubscribe.errors?.[0], 'subscription'));
  const b = body as { endpoint: string; keys: { p256dh: string; auth: string }; user_agent?: string | null };
  let url: URL;
  try {
    url = new URL(b.endpoint);
  } catch {
    throw new SpaceError('SPACE_ERR_INVALID', 'endpoint must be an absolute URL of a push service');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new SpaceError('SPACE_ERR_INVALID', 'endpoint must be an http or https URL');
  const key = base64UrlBytes(b.keys.p256dh);
  if (!key || key.length !== 65 || key[0] !== 4) {
    throw new SpaceError('SPACE_ERR_INVALID', 'keys.p256dh must be an uncompressed P-256 public key in base64url (65 bytes)');
  }
  const auth = base64UrlBytes(b.keys.auth);
  if (!auth || auth.length !== 16) throw new SpaceError('SPACE_ERR_INVALID', 'keys.auth must be a 16-byte secret in base64url');
  return { endpoint: b.endpoint, p256dh: b.keys.p256dh, auth: b.keys.auth, user_agent: b.user_agent ?? null };
}

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Parses the expression with croner in the zone; returns the parser's complaint, or undefined when valid. */
export function cronError(expr: string, timezone: string): string | undefined {
  try {
    const c = new Cron(expr, { timezone, paused: true });
    c.stop();
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^CronPattern: /, '');
  }
}

/**
 * A preference PUT body (an absent body counts as `{}`): omitted fields take
 * the seed's defaults, since a PUT writes the whole preference.
 */
export function parsePreference(body: unknown): PreferenceFields {
  const b = body === undefined ? {} : body;
  if (!validatePreference(b)) throw new SpaceError('SPACE_ERR_INVALID', describe(validatePreference.errors?.[0], 'preference'));
  const f: PreferenceFields = { ...PREFERENCE_DEFAULTS, ...(b as Partial<PreferenceFields>) };
  if (!isValidTimezone(f.timezone)) {
    throw new SpaceError('SPACE_ERR_INVALID', `timezone "${f.timezone}" is not an IANA time zone name (for example "UTC" or "Europe/Berlin")`);
  }
  if (f.schedule_cron !== null) {
    const err = cronError(f.schedule_cron, f.timezone);
    if (err) throw new SpaceError('SPACE_ERR_INVALID', `schedule_cron "${f.schedule_cron}" is not a valid cron expression: ${err}`);
  }
  if ((f.quiet_start === null) !== (f.quiet_end === null)) {
    throw new SpaceError('SPACE_ERR_INVALID', 'quiet_start and quiet_end go together: set both (HH:MM) or neither');
  }
  return f;
}

/** A path id: a positive integer written in decimal. */
export function parseId(raw: string, name: string): number {
  if (!/^[0-9]{1,15}$/.test(raw) || Number(raw) < 1) throw new SpaceError('SPACE_ERR_INVALID', `${name} must be a positive integer, got "${raw}"`);
  return Number(raw);
}

function queryInt(raw: unknown, name: string, dflt: number, min: number, max: number): number {
  if (raw === undefined) return dflt;
  if (typeof raw !== 'string' || !/^-?[0-9]{1,15}$/.test(raw)) throw new SpaceError('SPACE_ERR_INVALID', `${name} must be an integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (n < min || n > max) throw new SpaceError('SPACE_ERR_INVALID', `${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/**
 * `limit` (default 50, 1..200) and either `offset` (default 0, the seed's
 * paging) or `before_id` (keyset paging: the entries older than that id);
 * above the maximum is refused, not clamped.
 */
export function parsePage(query: Record<string, unknown>): { limit: number; offset: number; beforeId: number | null } {
  const limit = queryInt(query.limit, 'limit', LIMITS.pageDefault, 1, LIMITS.pageMax);
  const offset = queryInt(query.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const beforeId = query.before_id === undefined ? null : queryInt(query.before_id, 'before_id', 0, 1, Number.MAX_SAFE_INTEGER);
  if (beforeId !== null && query.offset !== undefined) {
    throw new SpaceError('SPACE_ERR_INVALID', 'use before_id or offset, not both: before_id pages by id (the id of the last entry of the previous page)');
  }
  return { limit, offset, beforeId };
}
