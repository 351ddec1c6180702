/**
 * Headless Debian Chromium (/usr/bin/chromium) through playwright-core: never
 * a downloaded browser. Each call gets a fresh profile directory, removed
 * when the test ends, and records page errors and console errors so a test
 * can assert there were none.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface BrowserPage {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors and console errors, in order. */
  problems: string[];
}

export async function openPage(t: Test, viewport = { width: 1280, height: 860 }): Promise<BrowserPage> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'positioner-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport });
  t.teardown(async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  return { context, page, problems };
}

/** Saves a screenshot under test-artifacts/ (gitignored) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
