/**
 * The subscribe page's files (this folder: plain HTML, CSS and browser
 * JavaScript, no build step), served by the space service at `/` unless
 * SUBSCRIBE_PAGE=off. tsc does not copy them to dist/, so the built server
 * reads them from the source tree, as the positioner's dashboard does.
 *
 *   /             index.html      the page
 *   /subscribe.js                 its script (permission, push subscription, preferences, log, live feed)
 *   /subscribe.css
 *   /sw.js                        the service worker (shows pushes, handles clicks); at the root so its scope is the whole origin
 *   /icon.png                     the notification icon named in every push payload
 */
import fs from 'node:fs';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/** URL path -> file in this folder. */
const ROUTES: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/subscribe.js': 'subscribe.js',
  '/subscribe.css': 'subscribe.css',
  '/sw.js': 'sw.js',
  '/icon.png': 'icon.png',
};

export const PAGE_PATHS = Object.keys(ROUTES);
/** The icon every push payload names (docs/space.md, "Push payload"), relative to the page's folder (the worker's scope). */
export const PAYLOAD_ICON = './icon.png';

/**
 * Same origin only: the API and the live feed are on the page's own origin.
 * The service worker gets the same policy (it only calls the API).
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface PageAsset {
  body: Buffer;
  headers: Record<string, string>;
}

function webDir(): string | null {
  // From api/space/web (tests, ts-node) and from dist/api/space/web (the built server).
  for (const dir of [__dirname, path.resolve(__dirname, '..', '..', '..', '..', 'api', 'space', 'web')]) {
    if (fs.existsSync(path.join(dir, 'index.html'))) return dir;
  }
  return null;
}

/** Every asset by URL path, read once at start; null when the files are not installed. */
export function loadPage(): Map<string, PageAsset> | null {
  const dir = webDir();
  if (!dir) return null;
  const assets = new Map<string, PageAsset>();
  for (const [urlPath, file] of Object.entries(ROUTES)) {
    const type = TYPES[path.extname(file)];
    assets.set(urlPath, { body: fs.readFileSync(path.join(dir, file)), headers: { 'Content-Type': type, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff' } });
  }
  return assets;
}
