/**
 * CORS for pages hosted on other origins (CORS_ORIGINS): a request whose
 * `Origin` is in the configured list, compared exactly, gets
 * `Access-Control-Allow-Origin` with that origin (and may read the `Link`
 * header that names the log's next page); a preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) from such an origin is answered 204 with
 * the methods of the path it asks about. Any other origin gets no CORS
 * header at all, so the browser refuses it; the request itself is served as
 * before (the API has no authentication: CORS keeps other sites' scripts from
 * reading answers, it does not protect the service).
 *
 * Same-origin use (the subscribe page served at `/`) needs none of this.
 */
import type http from 'node:http';
import type { NextFunction, Request, Response } from 'express';

/** Request headers a page may send: JSON bodies need Content-Type, which is not CORS-safelisted. */
const ALLOWED_HEADERS = 'Content-Type';
/** Answer headers a page may read besides the CORS-safelisted ones: Link names the log's next page (keyset paging). */
const EXPOSED_HEADERS = 'Link';
/** Browsers cache a preflight this long (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SEC = 600;

/**
 * Checks one configured origin: `scheme://host[:port]` exactly as a browser
 * sends it (no path, no trailing slash, default ports left out). Returns an
 * error message, or null when it is fine.
 */
export function originProblem(raw: string): string | null {
  if (raw === '*') return 'a wildcard is not accepted; list each origin that hosts a page (e.g. https://example.org)';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `"${raw}" is not a URL; write an origin such as https://example.org or http://localhost:5173`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `"${raw}" is not an http(s) origin`;
  if (u.origin !== raw) return `"${raw}" is not written as a browser sends it; use "${u.origin}" (scheme, host and port only, lower case, no trailing slash)`;
  return null;
}

export class Cors {
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.origins = new Set(origins);
  }

  /** The request's Origin when it is one of the configured origins, else null. */
  allowed(req: http.IncomingMessage): string | null {
    const origin = req.headers.origin;
    return typeof origin === 'string' && this.origins.has(origin) ? origin : null;
  }

  /**
   * The headers every answer gets: the allow header for listed origins, and
   * `Vary: Origin` whenever CORS is on, so caches keep answers apart. On a
   * plain node:http answer, for the routes served before express (app.ts).
   */
  apply(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.origins.size > 0) {
      const vary = res.getHeader('Vary');
      res.setHeader('Vary', vary === undefined ? 'Origin' : `${String(vary)}, Origin`);
    }
    const origin = this.allowed(req);
    if (origin) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
  }

  /** apply() as express middleware, for every answer of the app. */
  headers() {
    return (req: Request, res: Response, next: NextFunction): void => {
      this.apply(req, res);
      next();
    };
  }

  /**
   * Answers a preflight for a path served with `methods`; returns false when
   * the request is not a preflight from a listed origin (the caller goes on
   * as for any other method).
   */
  preflight(req: Request, res: Response, methods: readonly string[]): boolean {
    if (req.method !== 'OPTIONS' || !this.allowed(req) || typeof req.headers['access-control-request-method'] !== 'string') return false;
    res.setHeader('Access-Control-Allow-Methods', methods.join(', '));
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SEC));
    // Chromium's Private Network Access asks this before a public page may call a service on a private address.
    if (req.headers['access-control-request-private-network'] === 'true') res.setHeader('Access-Control-Allow-Private-Network', 'true');
    res.status(204).end();
    return true;
  }
}
