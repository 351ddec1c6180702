/*
 * The positioner dashboard: plain browser JavaScript, no build step.
 *
 * State comes only from the live feed (WebSocket /ws: a `config` and a
 * `status` message on connect, status 20 times a second while moving and on
 * every change); commands go to the REST API, and their errors are shown as
 * the API words them. The plot keeps the last minute of status messages.
 */
'use strict';

(function () {
  const PLOT_WINDOW_MS = 60_000;
  const $ = (id) => document.getElementById(id);
  const fmt = (v, digits = 3) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–');

  let status = null;
  let config = null;
  let target = null; // { theta, phi } of the last accepted move
  let lastState = null;
  let clockOffsetMs = 0; // server time - browser time, from sent_at_ms
  const samples = []; // { t, theta, phi }

  // ---- dials -------------------------------------------------------------
  const SVG = 'http://www.w3.org/2000/svg';
  function ticks(groupId, from, to, major, minor) {
    const g = $(groupId);
    for (let a = from; a <= to; a += minor) {
      if (groupId === 'ticks-phi' && a === 360) continue;
      const isMajor = a % major === 0;
      const line = document.createElementNS(SVG, 'line');
      line.setAttribute('x1', '100'); line.setAttribute('y1', isMajor ? '16' : '16');
      line.setAttribute('x2', '100'); line.setAttribute('y2', isMajor ? '30' : '23');
      line.setAttribute('transform', `rotate(${a} 100 100)`);
      g.appendChild(line);
      if (isMajor) {
        const rad = (a * Math.PI) / 180;
        const text = document.createElementNS(SVG, 'text');
        text.setAttribute('x', String(100 + 52 * Math.sin(rad)));
        text.setAttribute('y', String(100 - 52 * Math.cos(rad)));
        text.textContent = String(a);
        g.appendChild(text);
      }
    }
  }
  ticks('ticks-theta', 0, 180, 30, 10);
  ticks('ticks-phi', 0, 360, 90, 15);

  function setAngle(el, deg) {
    el.setAttribute('transform', `rotate(${deg.toFixed(3)} 100 100)`);
    el.dataset.deg = String(deg);
  }

  // ---- plot --------------------------------------------------------------
  const plot = $('plot');
  const Y_MIN = -10, Y_MAX = 370;
  let plotQueued = false;
  function queuePlot() {
    if (plotQueued) return;
    plotQueued = true;
    requestAnimationFrame(() => { plotQueued = false; drawPlot(); });
  }
  function drawPlot() {
    const w = Math.max(200, plot.clientWidth), h = Math.max(100, plot.clientHeight);
    plot.setAttribute('viewBox', `0 0 ${w} ${h}`);
    const left = 36, right = 8, top = 8, bottom = 20;
    const now = Date.now() + clockOffsetMs;
    const x = (t) => left + ((t - (now - PLOT_WINDOW_MS)) / PLOT_WINDOW_MS) * (w - left - right);
    const y = (v) => top + (1 - (Math.min(Y_MAX, Math.max(Y_MIN, v)) - Y_MIN) / (Y_MAX - Y_MIN)) * (h - top - bottom);
    const grid = $('plot-grid');
    grid.textContent = '';
    for (const v of [0, 90, 180, 270, 360]) {
      grid.appendChild(el('line', { x1: left, x2: w - right, y1: y(v), y2: y(v), class: 'grid-line' }));
      grid.appendChild(el('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, String(v)));
    }
    for (let s = 0; s <= 60; s += 10) {
      const tx = x(now - s * 1000);
      grid.appendChild(el('line', { x1: tx, x2: tx, y1: top, y2: h - bottom, class: 'grid-line' }));
      grid.appendChild(el('text', { x: tx, y: h - 5, 'text-anchor': s === 0 ? 'end' : 'middle' }, s === 0 ? 'now' : `−${s} s`));
    }
    while (samples.length > 2 && samples[1].t < now - PLOT_WINDOW_MS) samples.shift();
    const pts = samples.slice();
    if (status && pts.length > 0) pts.push({ t: now, theta: status.theta_deg, phi: status.phi_deg });
    const line = (key) => pts.map((p) => `${Math.max(left, x(p.t)).toFixed(1)},${y(p[key]).toFixed(1)}`).join(' ');
    $('plot-theta').setAttribute('points', line('theta'));
    $('plot-phi').setAttribute('points', line('phi'));
    plot.dataset.samples = String(samples.length);
  }
  function el(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  setInterval(queuePlot, 500); // scrolls at rest too
  window.addEventListener('resize', queuePlot);

  // ---- log and errors ----------------------------------------------------
  function log(text, bad) {
    const li = document.createElement('li');
    if (bad) li.className = 'bad';
    const time = document.createElement('time');
    time.textContent = new Date().toLocaleTimeString([], { hour12: false });
    li.append(time, text);
    const list = $('log');
    list.prepend(li);
    while (list.children.length > 100) list.lastChild.remove();
  }
  function showError(message, code) {
    $('error-text').textContent = code ? `${message} ` : message;
    if (code) {
      const c = document.createElement('span');
      c.className = 'code';
      c.textContent = `(${code})`;
      $('error-text').appendChild(c);
    }
    $('error').hidden = false;
    log(message, true);
  }
  function clearError() { $('error').hidden = true; }
  $('error-close').addEventListener('click', clearError);

  // ---- status and config -------------------------------------------------
  function applyStatus(s) {
    if (status === null) {
      // Start the move form where the positioner is: editing one angle then moves only that axis.
      $('move-theta').value = String(Math.round(s.theta_deg * 1000) / 1000);
      $('move-phi').value = String(Math.round(s.phi_deg * 1000) / 1000);
    }
    status = s;
    if (typeof s.sent_at_ms === 'number') clockOffsetMs = s.sent_at_ms - Date.now();
    samples.push({ t: s.sent_at_ms ?? Date.now(), theta: s.theta_deg, phi: s.phi_deg });
    $('theta-deg').textContent = fmt(s.theta_deg);
    $('phi-deg').textContent = fmt(s.phi_deg);
    $('theta-el').textContent = fmt(90 - s.theta_deg, 2);
    setAngle($('needle-theta'), s.theta_deg);
    setAngle($('needle-phi'), s.phi_deg);
    const badge = $('state');
    badge.textContent = s.state;
    badge.dataset.state = s.state;
    $('homed').textContent = s.homed ? 'homed' : 'not homed';
    $('homed').classList.toggle('yes', s.homed);
    for (const axis of ['theta', 'phi']) {
      const a = s.axes[axis];
      $(`ax-${axis}-pos`).textContent = `${fmt(a.position_deg)}°`;
      $(`ax-${axis}-steps`).textContent = String(a.position_steps);
      $(`ax-${axis}-vel`).textContent = `${fmt(a.velocity_deg_s, 2)} °/s`;
      $(`ax-${axis}-homed`).textContent = a.homed ? 'yes' : 'no';
      $(`ax-${axis}-err`).textContent = a.homing_error_steps === null ? '–' : String(a.homing_error_steps);
    }
    const fault = $('fault');
    if (s.state === 'error' && s.fault) {
      fault.textContent = `Fault: ${s.fault.message} (${s.fault.code}). Moves are refused until homing succeeds: use Home.`;
      fault.hidden = false;
    } else {
      fault.hidden = true;
    }
    const moving = s.state === 'moving' && target;
    for (const axis of ['theta', 'phi']) {
      const mark = $(`target-${axis}`);
      mark.setAttribute('visibility', moving ? 'visible' : 'hidden');
      if (moving) setAngle(mark, target[axis]);
    }
    $('target-text').textContent = target ? `θ ${fmt(target.theta)}° φ ${fmt(target.phi)}°` : '–';
    if (s.state !== lastState) {
      if (lastState !== null) log(`${lastState} → ${s.state} at θ ${fmt(s.theta_deg)} φ ${fmt(s.phi_deg)}${s.fault ? `: ${s.fault.message}` : ''}`, s.state === 'error');
      lastState = s.state;
    }
    queuePlot();
  }

  function applyConfig(c) {
    config = c;
    for (const [id, key] of [['cfg-speed', 'speed'], ['cfg-accel', 'accel']]) {
      const input = $(id);
      if (document.activeElement !== input && !input.dataset.dirty) input.value = String(c[key]);
      input.max = String(key === 'speed' ? c.max_speed : c.max_accel);
    }
    $('cfg-max-speed').textContent = `${c.max_speed} °/s`;
    $('cfg-max-accel').textContent = `${c.max_accel} °/s²`;
    $('cfg-micro').textContent = `1/${c.microstepping}`;
    $('cfg-theta-spd').textContent = String(c.theta_steps_per_deg);
    $('cfg-phi-spd').textContent = String(c.phi_steps_per_deg);
  }

  // ---- live feed ---------------------------------------------------------
  let retryMs = 500;
  function connect() {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
    const ws = new WebSocket(url);
    ws.onopen = () => {
      retryMs = 500;
      $('link').dataset.link = 'up';
      $('link').textContent = 'live';
      log('live feed connected');
    };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === 'status') applyStatus(m);
      else if (m.type === 'config') applyConfig(m);
    };
    ws.onclose = () => {
      $('link').dataset.link = 'down';
      $('link').textContent = `offline, retrying in ${(retryMs / 1000).toFixed(1)} s`;
      log('live feed lost; reconnecting', true);
      setTimeout(connect, retryMs);
      retryMs = Math.min(5000, retryMs * 2);
    };
  }
  connect();

  // ---- commands ----------------------------------------------------------
  async function api(method, path, body) {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      showError(`cannot reach the positioner: ${e.message}`);
      return null;
    }
    const data = await res.json().catch(() => ({}));
    if (!res.ok) {
      showError(data.error ?? `HTTP ${res.status}`, res.headers.get('Positioner-Error-Code'));
      return null;
    }
    clearError();
    return data;
  }
  function moved(r, what) {
    if (!r) return;
    target = { theta: r.target_theta, phi: r.target_phi };
    log(`${what} → θ ${fmt(r.target_theta)} φ ${fmt(r.target_phi)}`);
  }

  async function stop() {
    const r = await api('POST', '/stop');
    if (r) log('stop');
  }
  $('stop').addEventListener('click', stop);

  function numberField(input, min, max, name) {
    const v = input.value.trim() === '' ? NaN : Number(input.value);
    const ok = Number.isFinite(v) && v >= min && v <= max;
    input.setAttribute('aria-invalid', ok ? 'false' : 'true');
    if (!ok) showError(`${name} must be a number from ${min} to ${max}`);
    return ok ? v : null;
  }

  $('move-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const theta = numberField($('move-theta'), 0, 180, 'θ');
    const phi = theta === null ? null : numberField($('move-phi'), 0, 360, 'φ');
    if (theta === null || phi === null) return;
    moved(await api('POST', '/move', { theta_deg: theta, phi_deg: phi }), 'move');
  });

  async function jog(axis, sign) {
    const step = Number($('jog-step').value) * sign;
    const body = { d_theta: axis === 'theta' ? step : 0, d_phi: axis === 'phi' ? step : 0 };
    moved(await api('POST', '/move/relative', body), `jog ${axis === 'theta' ? 'θ' : 'φ'} ${sign > 0 ? '+' : ''}${step}`);
  }
  for (const b of document.querySelectorAll('[data-jog]')) {
    b.addEventListener('click', () => jog(b.dataset.jog, Number(b.dataset.sign)));
  }

  for (const b of document.querySelectorAll('[data-home]')) {
    b.addEventListener('click', async () => {
      const r = await api('POST', '/home', { axis: b.dataset.home });
      if (r) { target = null; log(`home ${r.axis}`); }
    });
  }

  for (const id of ['cfg-speed', 'cfg-accel']) $(id).addEventListener('input', () => { $(id).dataset.dirty = '1'; });
  $('config-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = {};
    for (const [id, key] of [['cfg-speed', 'speed'], ['cfg-accel', 'accel']]) {
      const max = config ? (key === 'speed' ? config.max_speed : config.max_accel) : Infinity;
      const v = numberField($(id), 0.001, max, key);
      if (v === null) return;
      if (!config || v !== config[key]) body[key] = v;
    }
    if (Object.keys(body).length === 0) return;
    const r = await api('POST', '/config', body);
    if (r) {
      for (const id of ['cfg-speed', 'cfg-accel']) delete $(id).dataset.dirty;
      log(`config: speed ${r.speed} °/s, accel ${r.accel} °/s²`);
    }
  });

  // ---- keyboard ----------------------------------------------------------
  const ARROWS = { ArrowLeft: ['phi', -1], ArrowRight: ['phi', 1], ArrowDown: ['theta', -1], ArrowUp: ['theta', 1] };
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      ev.preventDefault();
      void stop();
      return;
    }
    const target = ev.target;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement;
    if (typing || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const jogKey = ARROWS[ev.key];
    if (jogKey) {
      ev.preventDefault();
      void jog(jogKey[0], jogKey[1]);
    }
  });
})();
