/*
 * The subscribe page of the space service: plain browser JavaScript, no
 * build step (docs/space.md, "Subscribe page").
 *
 *   push      "Turn on": notification permission, the service worker
 *             (sw.js), a push subscription with the server's VAPID key
 *             (bounded: a push service that does not answer is reported,
 *             not waited for), then POST /api/notifications/subscribe
 *   log       GET /api/notifications, newest first, older pages by before_id; mark read, mark all read
 *   live      WebSocket /api/notifications/ws: every new log entry and the
 *             unread count arrive here (the page never adds an entry from a
 *             POST's answer); the service worker tells the page what a
 *             notification click marked read
 *   prefs     GET/PUT/DELETE /api/notifications/preferences/...
 *
 * Errors are shown as the API words them, with its code.
 */
'use strict';

(function () {
  /** A push service that has not answered by then will not (Chromium offline never does). */
  const SUBSCRIBE_TIMEOUT_MS = 15_000;
  const PAGE_SIZE = 50;
  const RECONNECT_MAX_MS = 10_000;
  // A copy of this page hosted elsewhere names the service here (and lists its own origin in CORS_ORIGINS).
  // By default the API is beside the page, also when a proxy serves both under a path prefix.
  const API_BASE = new URL(document.documentElement.dataset.api || './', location.href);
  const api = (path) => new URL(path.replace(/^\//, ''), API_BASE).href;

  const GLOBAL = ['launch', 'reentry', 'space_weather', 'solar_flare', 'agency_scales', 'neo_approach', 'conjunction', 'hf_conditions', 'daily_digest'];
  const LOCATION = ['satellite_pass', 'aurora', 'observing', 'sonde_nearby', 'whats_up'];
  const LABELS = {
    launch: 'Launches', reentry: 'Re-entries', space_weather: 'Space weather', solar_flare: 'Solar flares',
    agency_scales: 'R/S/G scale changes', neo_approach: 'Near-Earth object approaches', conjunction: 'Satellite conjunctions',
    hf_conditions: 'HF radio conditions', daily_digest: 'Daily digest', satellite_pass: 'Satellite passes', aurora: 'Aurora',
    observing: 'Observing conditions', sonde_nearby: 'Radiosondes nearby', whats_up: "What's up tonight", test: 'Test',
  };
  const PREF_FIELDS = ['is_enabled', 'lead_times', 'schedule_cron', 'min_altitude', 'timezone', 'config', 'quiet_start', 'quiet_end'];

  const $ = (id) => document.getElementById(id);
  const h = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('data-')) e.setAttribute(k, String(v));
      else if (k in e) e[k] = v;
      else e.setAttribute(k, String(v));
    }
    e.append(...children.filter((c) => c !== null && c !== undefined));
    return e;
  };

  // ---- errors and calls ----------------------------------------------------

  function showError(message, code) {
    $('error-text').textContent = code ? `${message} (${code})` : message;
    $('error').hidden = false;
  }
  $('error-close').addEventListener('click', () => { $('error').hidden = true; });

  class ApiError extends Error {
    constructor(message, code, status) { super(message); this.code = code; this.status = status; }
  }

  /** JSON call to the service; throws ApiError with the service's own words. */
  async function call(method, path, body) {
    let res;
    try {
      res = await fetch(api(path), {
        method,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ApiError(`the service did not answer (${e.message}); is it running?`, 'NETWORK', 0);
    }
    const text = await res.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { /* not JSON: reported below */ }
    if (!res.ok) throw new ApiError((json && json.error) || `HTTP ${res.status} from ${method} ${path}`, json && json.code, res.status);
    return json;
  }

  // ---- unread count --------------------------------------------------------

  function setUnread(n) {
    const b = $('unread');
    b.dataset.count = String(n);
    b.textContent = `${n} unread`;
    document.title = n > 0 ? `(${n}) Space notifications` : 'Space notifications';
  }
  async function refreshUnread() {
    try { setUnread((await call('GET', '/api/notifications/unread-count')).count); } catch { /* the feed's hello corrects it */ }
  }

  // ---- the log -------------------------------------------------------------

  const entries = new Map(); // id -> li
  // Older pages by keyset (before_id = the oldest entry shown): entries arriving live cannot shift them, and a deep page costs what the first does.
  const highlight = Number(new URLSearchParams(location.search).get('notification')) || null;

  function entryItem(n) {
    const time = h('time', { dateTime: n.sent_at }, new Date(n.sent_at).toLocaleString());
    const readBtn = h('button', { type: 'button', class: 'mark-read', 'data-id': n.id }, 'Mark read');
    readBtn.setAttribute('aria-label', `Mark "${n.title}" read`);
    const li = h('li', { class: 'entry', 'data-id': n.id, 'data-read': n.read_at ? 'true' : 'false', id: `n-${n.id}`, tabIndex: -1 },
      h('div', { class: 'entry-head' }, h('strong', { class: 'title' }, n.title), h('span', { class: 'state' }, n.read_at ? 'read' : 'unread')),
      h('p', { class: 'body' }, n.body),
      h('div', { class: 'meta' }, h('span', { class: 'cat' }, LABELS[n.category] || n.category), time,
        n.location_id ? h('span', {}, `location ${n.location_id}`) : null,
        n.push_sent ? null : h('span', { class: 'not-pushed', title: 'no push service accepted it (no subscription, quiet hours or push off)' }, 'not pushed'),
        readBtn));
    readBtn.hidden = Boolean(n.read_at);
    return li;
  }

  function addEntry(n, atTop) {
    if (entries.has(n.id)) return false;
    const li = entryItem(n);
    entries.set(n.id, li);
    const list = $('log');
    if (atTop) {
      // Keep newest first even if the feed and a page overlap.
      const after = [...list.children].find((c) => Number(c.dataset.id) < n.id);
      list.insertBefore(li, after || null);
    } else list.appendChild(li);
    $('log-empty').hidden = true;
    return true;
  }

  function markShownRead(id) {
    const li = entries.get(id);
    if (!li || li.dataset.read === 'true') return;
    li.dataset.read = 'true';
    li.querySelector('.state').textContent = 'read';
    const btn = li.querySelector('.mark-read');
    if (btn.contains(document.activeElement)) li.focus();
    btn.hidden = true;
  }

  async function loadPage(reset) {
    if (reset) {
      $('log').textContent = '';
      entries.clear();
    }
    const oldest = entries.size ? Math.min(...entries.keys()) : null;
    const page = await call('GET', `/api/notifications?limit=${PAGE_SIZE}${oldest === null ? '' : `&before_id=${oldest}`}`);
    for (const n of page) addEntry(n, false);
    $('more').hidden = page.length < PAGE_SIZE;
    $('log-empty').hidden = entries.size > 0;
    if (reset && highlight && entries.has(highlight)) {
      const li = entries.get(highlight);
      li.classList.add('highlight');
      li.focus();
    }
  }

  $('more').addEventListener('click', () => loadPage(false).catch((e) => showError(e.message, e.code)));
  $('log').addEventListener('click', async (ev) => {
    const btn = ev.target.closest('.mark-read');
    if (!btn) return;
    const id = Number(btn.dataset.id);
    try {
      await call('POST', `/api/notifications/${id}/read`);
      markShownRead(id);
      await refreshUnread();
    } catch (e) { showError(e.message, e.code); }
  });
  $('read-all').addEventListener('click', async () => {
    try {
      await call('POST', '/api/notifications/read-all');
      for (const id of entries.keys()) markShownRead(id);
      await refreshUnread();
    } catch (e) { showError(e.message, e.code); }
  });

  // ---- live feed -----------------------------------------------------------

  let retryMs = 500;
  let everConnected = false;
  function connect() {
    const url = new URL('api/notifications/ws', API_BASE);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url);
    const link = $('link');
    ws.addEventListener('open', () => {
      retryMs = 500;
      link.dataset.link = 'up';
      link.textContent = 'live';
      // Entries written while the feed was down: reload the first page.
      if (everConnected) loadPage(true).catch((e) => showError(e.message, e.code));
      everConnected = true;
    });
    ws.addEventListener('message', (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return; }
      if (m.type === 'hello') setUnread(m.unread_count);
      else if (m.type === 'notification' && addEntry(m.notification, true)) {
        if (!m.notification.read_at) setUnread(Number($('unread').dataset.count) + 1);
      }
    });
    ws.addEventListener('close', () => {
      link.dataset.link = 'down';
      link.textContent = 'offline, reconnecting…';
      setTimeout(connect, retryMs);
      retryMs = Math.min(RECONNECT_MAX_MS, retryMs * 2);
    });
  }

  // ---- push subscription ---------------------------------------------------

  const STORE_KEY = 'space-notifications.subscription';
  let vapidKey = null;

  function setPush(state, text) {
    const s = $('push-status');
    s.dataset.state = state;
    s.textContent = text;
    $('subscribe').hidden = state === 'on';
    $('unsubscribe').hidden = state !== 'on';
    $('subscribe').disabled = ['unsupported', 'not-configured', 'denied', 'working'].includes(state);
  }

  function base64UrlToBytes(s) {
    const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
    return Uint8Array.from(b, (c) => c.charCodeAt(0));
  }

  function sameBytes(buffer, bytes) {
    if (!buffer) return false;
    const a = new Uint8Array(buffer);
    return a.length === bytes.length && a.every((x, i) => x === bytes[i]);
  }

  /** Resolves with the promise's value, or rejects with a TimeoutError after `ms` (the promise keeps running). */
  function within(promise, ms) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms / 1000} s`), { name: 'TimeoutError' })), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  async function register(sub) {
    const saved = await call('POST', '/api/notifications/subscribe', { ...sub.toJSON(), user_agent: navigator.userAgent });
    localStorage.setItem(STORE_KEY, JSON.stringify({ id: saved.id, endpoint: saved.endpoint }));
    setPush('on', 'Notifications are on for this browser.');
  }

  function swUrl() {
    const u = new URL('sw.js', location.href);
    if (document.documentElement.dataset.api) u.searchParams.set('api', API_BASE.href);
    return u.href;
  }

  async function turnOn() {
    setPush('working', 'Asking for permission…');
    const permission = await Notification.requestPermission();
    if (permission !== 'granted') {
      setPush(permission === 'denied' ? 'denied' : 'off',
        permission === 'denied'
          ? 'Notifications are blocked for this site. Allow them in the browser’s site settings, then reload.'
          : 'Permission was not given. Press “Turn on notifications” to be asked again.');
      return;
    }
    setPush('working', 'Registering the service worker…');
    let reg;
    try {
      await navigator.serviceWorker.register(swUrl());
      reg = await within(navigator.serviceWorker.ready, SUBSCRIBE_TIMEOUT_MS);
    } catch (e) {
      setPush('failed', `The service worker could not start (${e.message}). Reload the page and try again.`);
      return;
    }
    setPush('working', 'Subscribing with the browser’s push service…');
    const key = base64UrlToBytes(vapidKey);
    const existing = await reg.pushManager.getSubscription();
    // One made for another key (the service's VAPID keys were changed) cannot receive its pushes, and blocks a new one.
    if (existing && !sameBytes(existing.options.applicationServerKey, key)) await existing.unsubscribe();
    const pending = existing && sameBytes(existing.options.applicationServerKey, key) ? Promise.resolve(existing) : reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    let sub;
    try {
      sub = await within(pending, SUBSCRIBE_TIMEOUT_MS);
    } catch (e) {
      if (e.name === 'TimeoutError') {
        setPush('failed', `The browser’s push service did not answer within ${SUBSCRIBE_TIMEOUT_MS / 1000} s, so this browser is not subscribed. ` +
          'Push needs the browser maker’s service on the internet (Google’s for Chrome and Chromium): check the connection and press “Turn on notifications” again.');
        // Should it answer after all, the subscription is still registered.
        pending.then((late) => register(late)).catch(() => {});
      } else {
        setPush('failed', `The browser refused to subscribe (${e.name}: ${e.message}). Press “Turn on notifications” to try again.`);
      }
      return;
    }
    try {
      await register(sub);
    } catch (e) {
      setPush('failed', `Subscribed, but the service did not register it: ${e.message}${e.code ? ` (${e.code})` : ''}. Press “Turn on notifications” to try again.`);
    }
  }

  async function turnOff() {
    setPush('working', 'Turning off…');
    try {
      // The service first: should it not answer, nothing has changed and the page says so truthfully.
      const saved = JSON.parse(localStorage.getItem(STORE_KEY) || 'null');
      if (saved) await call('DELETE', `/api/notifications/subscribe/${saved.id}`).catch((e) => { if (e.status !== 404) throw e; });
      localStorage.removeItem(STORE_KEY);
      const reg = await navigator.serviceWorker.getRegistration(swUrl());
      const sub = reg && (await reg.pushManager.getSubscription());
      if (sub) await sub.unsubscribe();
      setPush('off', 'Notifications are off for this browser.');
    } catch (e) {
      setPush('on', 'Notifications are still on for this browser.');
      showError(`Could not turn notifications off: ${e.message}`, e.code);
    }
  }

  async function initPush() {
    if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
      setPush('unsupported', window.isSecureContext
        ? 'This browser cannot receive push notifications.'
        : 'Push needs a secure page: open it over https, or as http://localhost on this machine.');
      return;
    }
    try {
      vapidKey = (await call('GET', '/api/notifications/vapid-key')).public_key;
    } catch (e) {
      setPush('not-configured', `Push is not configured on the service: ${e.message}${e.code ? ` (${e.code})` : ''}`);
      return;
    }
    if (Notification.permission === 'denied') {
      setPush('denied', 'Notifications are blocked for this site. Allow them in the browser’s site settings, then reload.');
      return;
    }
    const reg = await navigator.serviceWorker.getRegistration(swUrl());
    const sub = reg && (await reg.pushManager.getSubscription().catch(() => null));
    if (sub && !sameBytes(sub.options.applicationServerKey, base64UrlToBytes(vapidKey))) {
      setPush('off', 'This browser was subscribed with the service’s previous key, which it no longer pushes with. Press “Turn on notifications” to subscribe again.');
    } else if (sub && Notification.permission === 'granted') {
      // Upsert: reactivates it on the service and keeps its keys current.
      await register(sub).catch((e) => setPush('failed', `This browser is subscribed but the service did not register it: ${e.message}`));
    } else setPush('off', 'Notifications are off for this browser.');
  }

  $('subscribe').addEventListener('click', () => { turnOn().catch((e) => setPush('failed', `Could not turn notifications on: ${e.message}`)); });
  $('unsubscribe').addEventListener('click', () => { turnOff(); });
  $('send-test').addEventListener('click', async () => {
    const out = $('test-result');
    $('send-test').disabled = true;
    out.textContent = 'Sending…';
    try {
      const r = await call('POST', '/api/notifications/test');
      // The entry itself arrives over the live feed.
      out.textContent = r.sent_count === 1 ? 'Sent to 1 subscription.' : `Sent to ${r.sent_count} subscriptions.`;
    } catch (e) {
      out.textContent = '';
      showError(e.message, e.code);
    } finally {
      $('send-test').disabled = false;
    }
  });

  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.addEventListener('message', (ev) => {
      const m = ev.data || {};
      if (m.type === 'read' && Number.isInteger(m.notification_id)) {
        markShownRead(m.notification_id);
        refreshUnread();
      } else if (m.type === 'show' && entries.has(m.notification_id)) {
        // A notification was clicked while this page was open: point at its entry.
        for (const li of entries.values()) li.classList.remove('highlight');
        const li = entries.get(m.notification_id);
        li.classList.add('highlight');
        li.focus();
      }
    });
  }

  // ---- preferences ---------------------------------------------------------

  const prefs = new Map(); // "global/launch" or "12/aurora" -> saved preference
  const keyOf = (locationId, category) => `${locationId === null ? 'global' : locationId}/${category}`;
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

  (function zones() {
    const list = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    const dl = $('zones');
    for (const z of ['UTC', ...list.filter((z) => z !== 'UTC')]) dl.appendChild(h('option', { value: z }));
  })();

  function prefSummary(p) {
    if (!p) return ['unset', 'not set'];
    if (!p.is_enabled) return ['off', 'off'];
    const parts = ['on'];
    if (p.lead_times && p.lead_times.length) parts.push(`${p.lead_times.join(', ')} min before`);
    if (p.quiet_start && p.quiet_end && p.quiet_start !== p.quiet_end) parts.push(`quiet ${p.quiet_start}–${p.quiet_end}`);
    return ['on', parts.join(' · ')];
  }

  function prefForm(locationId, category) {
    const key = keyOf(locationId, category);
    const id = `pref-${key.replace('/', '-')}`;
    const field = (name) => `${id}-${name}`;
    const form = h('form', { class: 'pref-form', novalidate: true, 'data-key': key },
      h('label', { class: 'check' }, h('input', { type: 'checkbox', id: field('enabled'), name: 'is_enabled' }), 'enabled'),
      h('label', {}, 'lead times', h('input', { type: 'text', id: field('lead'), name: 'lead_times', inputMode: 'numeric', placeholder: 'e.g. 1440, 60', 'aria-describedby': field('lead-hint') }),
        h('span', { class: 'unit', id: field('lead-hint') }, 'minutes before')),
      h('label', {}, 'quiet from', h('input', { type: 'time', id: field('quiet-start'), name: 'quiet_start' })),
      h('label', {}, 'to', h('input', { type: 'time', id: field('quiet-end'), name: 'quiet_end' })),
      h('label', {}, 'time zone', h('input', { type: 'text', id: field('tz'), name: 'timezone', autocomplete: 'off', spellcheck: false, placeholder: browserZone }),
      ),
      locationId !== null ? h('label', {}, 'min altitude', h('input', { type: 'number', id: field('alt'), name: 'min_altitude', min: 0, max: 90, step: 'any', inputMode: 'decimal' }), h('span', { class: 'unit' }, '°')) : null,
      h('div', { class: 'row actions' },
        h('button', { type: 'submit', class: 'primary' }, 'Save'),
        h('button', { type: 'button', class: 'remove' }, 'Remove'),
        h('span', { class: 'pref-status', role: 'status', id: field('status') })));
    form.querySelector('[name="timezone"]').setAttribute('list', 'zones');
    const details = h('details', { class: 'pref', id, 'data-category': category, 'data-location': locationId === null ? 'global' : locationId },
      h('summary', {}, h('span', { class: 'pref-name' }, LABELS[category] + (locationId === null ? '' : ` @ location ${locationId}`)), h('span', { class: 'pref-state' })),
      form);
    form.addEventListener('submit', (ev) => { ev.preventDefault(); savePref(details, locationId, category); });
    form.querySelector('.remove').addEventListener('click', () => removePref(details, locationId, category));
    fillPref(details, prefs.get(key));
    return details;
  }

  function fillPref(details, p) {
    const f = details.querySelector('form');
    f.elements.is_enabled.checked = p ? p.is_enabled : true;
    f.elements.lead_times.value = p && p.lead_times ? p.lead_times.join(', ') : '';
    f.elements.quiet_start.value = (p && p.quiet_start) || '';
    f.elements.quiet_end.value = (p && p.quiet_end) || '';
    f.elements.timezone.value = p ? p.timezone : browserZone;
    if (f.elements.min_altitude) f.elements.min_altitude.value = p ? String(p.min_altitude) : '10';
    f.querySelector('.remove').disabled = !p;
    const [state, text] = prefSummary(p);
    const s = details.querySelector('.pref-state');
    s.dataset.state = state;
    s.textContent = text;
    for (const el of f.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  }

  /** The PUT body: the saved preference (so fields this form does not show, such as config and schedule_cron, are kept) with the form's values. */
  function prefBody(f, saved) {
    const body = {};
    for (const k of PREF_FIELDS) if (saved && k in saved) body[k] = saved[k];
    const bad = (el, message) => { el.setAttribute('aria-invalid', 'true'); el.focus(); throw new Error(message); };
    body.is_enabled = f.elements.is_enabled.checked;
    const lead = f.elements.lead_times.value.trim();
    if (lead === '') body.lead_times = null;
    else {
      const parts = lead.split(/[\s,;]+/).filter(Boolean);
      if (!parts.every((x) => /^\d+$/.test(x))) bad(f.elements.lead_times, 'lead times are whole minutes separated by commas, e.g. 1440, 60');
      body.lead_times = parts.map(Number);
    }
    const qs = f.elements.quiet_start.value, qe = f.elements.quiet_end.value;
    if (Boolean(qs) !== Boolean(qe)) bad(qs ? f.elements.quiet_end : f.elements.quiet_start, 'give both quiet-hour times, or neither');
    body.quiet_start = qs || null;
    body.quiet_end = qe || null;
    body.timezone = f.elements.timezone.value.trim() || browserZone;
    if (f.elements.min_altitude) {
      const alt = f.elements.min_altitude.value.trim();
      if (alt !== '') body.min_altitude = Number(alt);
    }
    return body;
  }

  /** A form's status line: `state` ok, bad or busy (styled), `text` what happened; an API error brings its code. */
  function say(status, state, text, error) {
    status.dataset.state = state;
    status.textContent = error && error.code ? `${text} (${error.code})` : text;
  }

  async function savePref(details, locationId, category) {
    const f = details.querySelector('form');
    const status = f.querySelector('.pref-status');
    for (const el of f.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    const key = keyOf(locationId, category);
    let body;
    try {
      body = prefBody(f, prefs.get(key));
    } catch (e) {
      say(status, 'bad', e.message);
      return;
    }
    say(status, 'busy', 'Saving…');
    try {
      const saved = await call('PUT', `/api/notifications/preferences/${locationId === null ? 'global' : locationId}/${category}`, body);
      prefs.set(key, saved);
      fillPref(details, saved);
      say(status, 'ok', 'Saved.');
    } catch (e) {
      say(status, 'bad', e.message, e);
    }
  }

  async function removePref(details, locationId, category) {
    const status = details.querySelector('.pref-status');
    try {
      await call('DELETE', `/api/notifications/preferences/${locationId === null ? 'global' : locationId}/${category}`);
      prefs.delete(keyOf(locationId, category));
      fillPref(details, undefined);
      say(status, 'ok', 'Removed: nothing is sent for it.');
    } catch (e) {
      say(status, 'bad', e.message, e);
    }
  }

  async function loadPrefs() {
    const list = await call('GET', '/api/notifications/preferences');
    prefs.clear();
    for (const p of list) prefs.set(keyOf(p.location_id, p.category), p);
    const g = $('prefs-global');
    g.textContent = '';
    for (const c of GLOBAL) g.appendChild(prefForm(null, c));
    const l = $('prefs-location');
    l.textContent = '';
    for (const p of list) if (p.location_id !== null) l.appendChild(prefForm(p.location_id, p.category));
  }

  (function addLocationForm() {
    const sel = $('add-location-category');
    for (const c of [...LOCATION, ...GLOBAL]) sel.appendChild(h('option', { value: c }, LABELS[c]));
    $('add-location').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const input = $('add-location-id');
      const id = Number(input.value);
      if (!Number.isInteger(id) || id < 1) {
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      input.removeAttribute('aria-invalid');
      const existing = document.getElementById(`pref-${id}-${sel.value}`);
      const details = existing || prefForm(id, sel.value);
      if (!existing) $('prefs-location').appendChild(details);
      details.open = true;
      details.querySelector('input').focus();
    });
  })();

  // ---- start ---------------------------------------------------------------

  connect();
  Promise.all([loadPage(true), loadPrefs(), initPush()])
    .then(() => { document.body.dataset.ready = 'true'; })
    .catch((e) => showError(e.message, e.code));
})();
