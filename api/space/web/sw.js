/*
 * The subscribe page's service worker (served beside the page as sw.js; its
 * scope is the page's folder, `/` unless a proxy adds a path prefix).
 *
 *   push               shows the payload (docs/space.md, "Push payload"):
 *                      title, body, icon, and keeps `url` and
 *                      `notification_id` for the click; one notification per
 *                      log entry (tagged with its id)
 *   notificationclick  focuses a window already showing the page or the URL,
 *                      else opens the URL; marks the entry read through the
 *                      API and tells open pages so
 *   pushsubscriptionchange  the push service replaced the subscription (it
 *                      can, e.g. Firefox on key rotation): the new one, or
 *                      one made with the old one's key, is registered with
 *                      the API so pushes keep arriving with no page open
 *
 * Handlers are plain functions of this file's global scope, so
 * test/space/browser-sw.test.ts can run them in Node with a small fake
 * `self`. The API is beside this worker (its folder) unless the page
 * registered it with `?api=<base URL>`.
 */
'use strict';

/** The service: `?api=` when the page named one, else this worker's own folder (the page and API may sit under a proxy's path prefix). */
function apiBase() {
  const named = new URL(self.location.href).searchParams.get('api');
  return new URL(named || './', self.location.href);
}

/** An http(s) URL, resolved against the worker's scope; anything else falls back to the page. */
function safeUrl(raw, notificationId) {
  const fallback = new URL(notificationId ? `./?notification=${notificationId}` : './', self.registration.scope).href;
  if (typeof raw !== 'string' || raw === '') return fallback;
  try {
    const u = new URL(raw, self.registration.scope);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : fallback;
  } catch {
    return fallback;
  }
}

/** The title and options of the notification a push payload asks for; a payload that is not JSON is shown as text. */
function notificationFromPayload(text) {
  let p;
  try {
    p = JSON.parse(text);
  } catch {
    p = null;
  }
  if (!p || typeof p !== 'object') return { title: 'Space notification', options: { body: String(text || ''), data: { url: safeUrl(null, null), notification_id: null } } };
  const id = Number.isInteger(p.notification_id) ? p.notification_id : null;
  const options = {
    body: typeof p.body === 'string' ? p.body : '',
    data: { url: safeUrl(p.url, id), notification_id: id, category: p.category || null },
  };
  if (typeof p.icon === 'string' && p.icon) {
    try {
      options.icon = new URL(p.icon, self.registration.scope).href;
    } catch {
      // shown without an icon rather than not at all
    }
  }
  if (id !== null) options.tag = `notification-${id}`;
  const sentMs = Date.parse(p.sent_at);
  if (!Number.isNaN(sentMs)) options.timestamp = sentMs;
  return { title: typeof p.title === 'string' && p.title ? p.title : 'Space notification', options };
}

function onPush(event) {
  const n = notificationFromPayload(event.data ? event.data.text() : '');
  event.waitUntil(self.registration.showNotification(n.title, n.options));
}

/** A window on the URL itself, else one on the same page of the same origin, else none. */
function pickWindow(windows, url) {
  const target = new URL(url);
  const same = (c) => {
    const u = new URL(c.url);
    return u.origin === target.origin && u.pathname === target.pathname;
  };
  return windows.find((c) => c.url === url) || windows.find(same) || null;
}

async function openOrFocus(url, notificationId) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const win = pickWindow(windows, url);
  if (win) {
    if (win.url !== url && notificationId !== null) win.postMessage({ type: 'show', notification_id: notificationId });
    return win.focus();
  }
  return self.clients.openWindow(url);
}

/** POST .../read; a failure (offline, service down) leaves the entry unread, which the page shows. */
async function markRead(notificationId) {
  if (notificationId === null) return false;
  try {
    const res = await fetch(new URL(`api/notifications/${notificationId}/read`, apiBase()).href, { method: 'POST' });
    if (!res.ok) return false;
  } catch {
    return false;
  }
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const c of windows) c.postMessage({ type: 'read', notification_id: notificationId });
  return true;
}

function onNotificationClick(event) {
  const data = event.notification.data || {};
  const id = Number.isInteger(data.notification_id) ? data.notification_id : null;
  event.notification.close();
  // Both start now: a window may only be opened or focused while the click is being handled.
  event.waitUntil(Promise.all([openOrFocus(safeUrl(data.url, id), id), markRead(id)]));
}

/** Registers the replacement subscription; without one (some browsers send none) it subscribes again with the old key. */
async function resubscribe(oldSubscription, newSubscription) {
  let sub = newSubscription;
  const key = oldSubscription && oldSubscription.options && oldSubscription.options.applicationServerKey;
  if (!sub && key) sub = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  if (!sub) return false;
  const res = await fetch(new URL('api/notifications/subscribe', apiBase()).href, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...sub.toJSON(), user_agent: self.navigator ? self.navigator.userAgent : undefined }),
  });
  return res.ok;
}

function onSubscriptionChange(event) {
  event.waitUntil(resubscribe(event.oldSubscription || null, event.newSubscription || null).catch(() => false));
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('push', onPush);
self.addEventListener('notificationclick', onNotificationClick);
self.addEventListener('pushsubscriptionchange', onSubscriptionChange);
