/**
 * The web dashboard's files (api/dashboard/: plain HTML, CSS and browser
 * JavaScript, no build step), served at `/`. They are read from the source
 * tree, which is where they are found both from `api/` (tests, ts-node) and
 * from `dist/api/` (the built server): tsc does not copy them, and need not.
 */
import fs from 'node:fs';
import path from 'node:path';

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard.css': { file: 'dashboard.css', type: 'text/css; charset=utf-8' },
  '/dashboard.js': { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
  '/pattern-plot.js': { file: 'pattern-plot.js', type: 'text/javascript; charset=utf-8' },
};

export const DASHBOARD_PATHS = Object.keys(FILES);

/** Same-origin everything; the live feed is a same-origin WebSocket. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function dashboardDir(): string | null {
  for (const dir of [path.join(__dirname, 'dashboard'), path.resolve(__dirname, '..', '..', 'api', 'dashboard')]) {
    if (fs.existsSync(path.join(dir, 'index.html'))) return dir;
  }
  return null;
}

export interface DashboardAsset {
  body: Buffer;
  headers: Record<string, string>;
}

/** The assets by URL path, read once; null when the files are not there (an install without the sources). */
export function loadDashboard(): Map<string, DashboardAsset> | null {
  const dir = dashboardDir();
  if (!dir) return null;
  const assets = new Map<string, DashboardAsset>();
  for (const [urlPath, { file, type }] of Object.entries(FILES)) {
    const body = fs.readFileSync(path.join(dir, file));
    assets.set(urlPath, { body, headers: { 'Content-Type': type, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff' } });
  }
  return assets;
}
