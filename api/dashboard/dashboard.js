/*
 * The positioner dashboard: plain browser JavaScript, no build step.
 *
 * State comes only from the live feed (WebSocket /ws: a `config` and a
 * `status` message on connect, status 20 times a second while moving and on
 * every change); commands go to the REST API, and their errors are shown as
 * the API words them (with the page's own names for its buttons). The plot
 * keeps the last minute of status messages. The scan card starts a pattern
 * scan (POST /scan), follows its progress and samples on the same feed, and
 * plots them with pattern-plot.js: a polar cut in dB with the -3 dB beamwidth
 * and a theta/phi heat map that fills in as points arrive.
 */
'use strict';

(function () {
  const PLOT_WINDOW_MS = 60_000;
  const $ = (id) => document.getElementById(id);
  const fmt = (v, digits = 3) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–');

  let status = null;
  let config = null;
  let target = null; // { theta, phi } of the move in progress (from /status, or the last accepted move)
  let online = false;
  let homingSinceMs = null;
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
  /** The API names its endpoints and fields; on this page they are buttons and fields. */
  function pageWords(message) {
    return String(message)
      .replace(/\(POST \/stop\)/g, '(STOP)')
      .replace(/POST \/stop/g, 'STOP')
      .replace(/POST \/scan\/resume/g, 'Resume')
      .replace(/POST \/scan\/pause/g, 'Pause')
      .replace(/POST \/scan\b/g, 'Start scan')
      .replace(/\(POST \/home\)/g, '(Home)')
      .replace(/POST \/home/g, 'Home')
      .replace(/\btheta_deg\b/g, 'θ')
      .replace(/\bphi_deg\b/g, 'φ');
  }
  function showError(raw, code) {
    const message = pageWords(raw);
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
    setOnline(true);
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
    // The server says where a move goes (a page opened mid-move knows it too).
    if (s.target) target = { theta: s.target.theta_deg, phi: s.target.phi_deg };
    else if (s.state !== 'moving') target = null;
    const moving = s.state === 'moving' && target;
    for (const axis of ['theta', 'phi']) {
      const mark = $(`target-${axis}`);
      mark.setAttribute('visibility', moving ? 'visible' : 'hidden');
      if (moving) setAngle(mark, target[axis]);
      $(`target-${axis}-text`).textContent = moving ? `${fmt(target[axis])}°` : '–';
    }
    showHoming(s);
    if (s.state !== lastState) {
      if (lastState !== null) log(`${lastState} → ${s.state} at θ ${fmt(s.theta_deg)} φ ${fmt(s.phi_deg)}${s.fault ? `: ${s.fault.message}` : ''}`, s.state === 'error');
      lastState = s.state;
    }
    queuePlot();
  }

  /** Homing progress: each axis's phase (seek, back off, slow approach, zero) while the cycle runs. */
  const PHASES = ['seek', 'back_off', 'approach', 'done'];
  function showHoming(s) {
    const box = $('homing');
    if (s.state !== 'homing') {
      box.hidden = true;
      homingSinceMs = null;
      return;
    }
    if (homingSinceMs === null) homingSinceMs = Date.now();
    box.hidden = false;
    for (const axis of ['theta', 'phi']) {
      const phase = s.axes[axis].homing_phase;
      const el = $(`homing-${axis}`);
      // Not homing this axis (home θ only): its row says so by staying empty.
      el.dataset.phase = phase ?? '';
      const at = PHASES.indexOf(phase);
      for (const li of el.querySelectorAll('li')) {
        const i = PHASES.indexOf(li.dataset.step);
        li.className = at < 0 ? '' : i < at || phase === 'done' ? 'past' : i === at ? 'now' : '';
      }
    }
    $('homing-elapsed').textContent = String(Math.round((Date.now() - homingSinceMs) / 1000));
  }

  /** Offline: the server is gone, so nothing on the page may pass for its state. */
  function setOnline(up) {
    if (up === online) return;
    online = up;
    document.body.dataset.online = up ? 'yes' : 'no';
    if (up) return;
    const badge = $('state');
    badge.textContent = 'offline';
    badge.dataset.state = 'offline';
    badge.title = 'the positioner server cannot be reached; what the page shows is the last thing it said';
    for (const axis of ['theta', 'phi']) $(`target-${axis}`).setAttribute('visibility', 'hidden');
    $('homing').hidden = true;
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

  // ---- pattern scan -------------------------------------------------------
  const scan = (function () {
    const P = window.PatternPlot;
    const FLOOR_DB = P.DEFAULT_FLOOR_DB;
    let available = false;
    let current = null; // the Scan object (GET /scan, "scan" messages)
    let samples = [];
    let seen = new Set();
    let heat = null;
    let cutChoice = null; // the user's pick; null follows the strongest cut
    let drawQueued = false;

    const sampleKey = (s) => `${s.index}:${s.time_s}:${s.theta_deg}:${s.phi_deg}`;

    function planKind() {
      return (current && current.request && current.request.plan && current.request.plan.kind) || 'grid';
    }

    function reset(scanObj) {
      samples = [];
      seen = new Set();
      heat = new P.HeatMap(P.gridFor(scanObj && scanObj.request));
      cutChoice = null;
      drawHeatAxes();
      queueDraw();
    }

    function addSample(s) {
      const key = sampleKey(s);
      if (seen.has(key)) return;
      seen.add(key);
      samples.push(s);
      heat.add(s);
      queueDraw();
    }

    function showProgress(sc) {
      const has = sc && typeof sc.id === 'string';
      const state = has ? sc.state : 'none';
      const badge = $('scan-state');
      badge.dataset.state = state;
      badge.textContent = has ? `${state}${sc.name ? `: ${sc.name}` : ''}` : 'no scan yet';
      const done = has ? sc.points_done : 0;
      const total = has ? sc.points_total : 0;
      $('scan-bar').max = Math.max(1, total);
      $('scan-bar').value = done;
      $('scan-points').textContent = has ? `${done} / ${total} points${sc.points_failed ? `, ${sc.points_failed} failed` : ''}` : '–';
      const times = has ? [`elapsed ${P.formatDuration(sc.elapsed_s)}`] : [];
      if (has && state === 'running') times.push(`about ${P.formatDuration(sc.remaining_s)} left`);
      if (has && sc.error) times.push(pageWords(sc.error));
      $('scan-times').textContent = times.join(' · ');
      $('scan-pause').hidden = state !== 'running';
      $('scan-resume').hidden = !(state === 'paused' || state === 'aborted');
      const csv = $('scan-csv');
      csv.hidden = !has;
      if (has) {
        csv.href = `scan/results?format=csv&id=${encodeURIComponent(sc.id)}`;
        csv.download = `pattern-${sc.id.replace(/[^0-9A-Za-z-]/g, '')}.csv`;
      }
    }

    /** Set when the live feed reconnects: samples sent while it was down are fetched again. */
    let resync = false;
    function onScan(sc) {
      if (!available) return;
      const fresh = !current || current.id !== sc.id;
      current = sc;
      if (fresh) reset(sc);
      if (fresh || resync) void loadResults(sc.id);
      resync = false;
      showProgress(sc);
      if (fresh || sc.state !== 'running') log(`scan ${sc.state}: ${sc.points_done} / ${sc.points_total} points`, sc.state === 'failed');
    }

    function onSample(m) {
      if (!available || !current || m.scan_id !== current.id) return;
      addSample(m);
    }

    async function loadResults(id) {
      const res = await fetch(`scan/results?format=json&id=${encodeURIComponent(id)}`).catch(() => null);
      if (!res || !res.ok || !current || current.id !== id) return;
      const body = await res.json();
      for (const s of body.samples || []) addSample(s);
    }

    // ---- drawing
    function queueDraw() {
      if (drawQueued) return;
      drawQueued = true;
      requestAnimationFrame(() => {
        drawQueued = false;
        drawHeat();
        drawCut();
      });
    }

    const HEAT = { left: 34, top: 8, width: 344, height: 196 };
    function drawHeatAxes() {
      const g = $('heat-axes');
      g.textContent = '';
      if (!heat) return;
      const { theta, phi } = heat.grid;
      // Labels at the centre of the cell drawn for that angle.
      const x = (phiDeg) => HEAT.left + (((phiDeg - phi.startDeg) / phi.stepDeg + 0.5) / phi.count) * HEAT.width;
      const y = (thetaDeg) => HEAT.top + (((thetaDeg - theta.startDeg) / theta.stepDeg + 0.5) / theta.count) * HEAT.height;
      g.appendChild(el('rect', { x: HEAT.left, y: HEAT.top, width: HEAT.width, height: HEAT.height, class: 'heat-frame' }));
      for (let a = 0; a < 360; a += 90) {
        if (a < phi.startDeg || a > phi.startDeg + phi.stepDeg * (phi.count - 1)) continue;
        g.appendChild(el('text', { x: x(a), y: HEAT.top + HEAT.height + 14, 'text-anchor': 'middle' }, `φ ${a}°`));
      }
      for (let a = 0; a <= 180; a += 45) {
        if (a < theta.startDeg || a > theta.startDeg + theta.stepDeg * (theta.count - 1)) continue;
        g.appendChild(el('text', { x: HEAT.left - 4, y: y(a) + 4, 'text-anchor': 'end' }, `${a}°`));
      }
    }

    function drawHeat() {
      const g = $('heat-cells');
      const svg = $('heatmap');
      if (!heat) return;
      const { theta, phi } = heat.grid;
      const w = HEAT.width / phi.count;
      const h = HEAT.height / theta.count;
      const byKey = new Map([...g.children].map((r) => [r.dataset.key, r]));
      for (const c of heat.cells()) {
        let r = byKey.get(c.key);
        if (!r) {
          r = el('rect', { x: (HEAT.left + c.phiIndex * w).toFixed(2), y: (HEAT.top + c.thetaIndex * h).toFixed(2), width: (w + 0.3).toFixed(2), height: (h + 0.3).toFixed(2) });
          r.dataset.key = c.key;
          const tip = document.createElementNS(SVG, 'title');
          r.appendChild(tip);
          g.appendChild(r);
        }
        r.setAttribute('fill', P.colourFor(c.db, FLOOR_DB));
        r.dataset.db = c.db.toFixed(2);
        r.firstChild.textContent = `θ ${c.thetaDeg}° φ ${c.phiDeg}°: ${c.db.toFixed(1)} dB`;
      }
      for (const [key, r] of byKey) if (!heat.sums.has(key)) r.remove();
      svg.dataset.cells = String(heat.size);
    }

    /** The cuts on offer: per phi (0/180 paired) for grids and phi cuts, per theta for theta cuts. */
    function cutOptions() {
      if (planKind() === 'theta_cuts') return P.cutAngles(samples, 'theta').map((a) => ({ axis: 'theta', fixedDeg: a, label: `θ = ${a}°` }));
      const out = [];
      for (const a of P.cutAngles(samples, 'phi')) {
        const base = a >= 180 ? a - 180 : a;
        if (!out.some((o) => Math.abs(o.fixedDeg - base) < 1e-3)) out.push({ axis: 'phi', fixedDeg: base, label: `φ = ${base}° / ${base + 180}°` });
      }
      return out;
    }

    function chosenCut(options) {
      if (options.length === 0) return null;
      if (cutChoice) {
        const kept = options.find((o) => o.axis === cutChoice.axis && Math.abs(o.fixedDeg - cutChoice.fixedDeg) < 1e-3);
        if (kept) return kept;
      }
      if (options[0].axis === 'theta') return options[0];
      const strongest = P.strongestPhi(samples);
      const base = strongest === null ? options[0].fixedDeg : strongest >= 180 ? strongest - 180 : strongest;
      return options.find((o) => Math.abs(o.fixedDeg - base) < 1e-3) || options[0];
    }

    const POLAR = { cx: 170, cy: 170, radius: 140, floorDb: FLOOR_DB };
    function drawPolarGrid() {
      const g = $('polar-grid');
      for (let db = 0; db >= FLOOR_DB; db -= 10) {
        const r = (POLAR.radius * (db - FLOOR_DB)) / -FLOOR_DB;
        g.appendChild(el('circle', { cx: POLAR.cx, cy: POLAR.cy, r: Math.max(0.5, r), class: db === 0 ? 'ring rim' : 'ring' }));
        if (db > FLOOR_DB) g.appendChild(el('text', { x: POLAR.cx + 3, y: POLAR.cy - r + 11 }, `${db}`));
      }
      const r3 = (POLAR.radius * (-3 - FLOOR_DB)) / -FLOOR_DB;
      g.appendChild(el('circle', { cx: POLAR.cx, cy: POLAR.cy, r: r3, class: 'ring half-power' }));
      for (let a = 0; a < 360; a += 30) {
        const p = P.polarXY(a, 0, POLAR);
        g.appendChild(el('line', { x1: POLAR.cx, y1: POLAR.cy, x2: p.x, y2: p.y, class: 'spoke' }));
        const t = P.polarXY(a, 6, { ...POLAR, radius: POLAR.radius * 1.0 });
        const label = a > 180 ? a - 360 : a;
        g.appendChild(el('text', { x: t.x, y: t.y + 4, 'text-anchor': 'middle', class: 'angle' }, `${label}°`));
      }
    }

    function drawCut() {
      const select = $('cut-select');
      const options = cutOptions();
      const cutSel = chosenCut(options);
      const labels = options.map((o) => o.label).join('|');
      if (select.dataset.labels !== labels) {
        select.textContent = '';
        options.forEach((o, i) => {
          const opt = document.createElement('option');
          opt.value = String(i);
          opt.textContent = o.label;
          select.appendChild(opt);
        });
        select.dataset.labels = labels;
      }
      if (cutSel) select.value = String(options.indexOf(cutSel));
      const line = $('polar-line');
      const points = cutSel ? P.cut(samples, cutSel) : [];
      const norm = P.normaliseDb(points.map((p) => p.db));
      const xy = points.map((p, i) => P.polarXY(p.angleDeg, norm[i], POLAR));
      line.setAttribute('points', xy.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' '));
      line.dataset.points = String(points.length);
      // A theta cut goes round the whole circle in phi: its beam may straddle phi 0.
      const bw = P.halfPowerBeamwidth(points.map((p, i) => ({ angleDeg: p.angleDeg, db: norm[i] })), 3, { circular: cutSel && cutSel.axis === 'theta' });
      const text = $('beamwidth');
      for (const [id, deg] of [['bw-left', bw && bw.leftDeg], ['bw-right', bw && bw.rightDeg]]) {
        const mark = $(id);
        if (deg === null || deg === undefined) {
          mark.setAttribute('visibility', 'hidden');
          continue;
        }
        const p = P.polarXY(deg, 0, POLAR);
        mark.setAttribute('x2', p.x.toFixed(1));
        mark.setAttribute('y2', p.y.toFixed(1));
        mark.setAttribute('visibility', 'visible');
        mark.dataset.deg = String(deg);
      }
      const sector = $('polar-bw');
      if (bw && bw.widthDeg !== null) {
        const a = P.polarXY(bw.leftDeg, 0, POLAR);
        const b = P.polarXY(bw.rightDeg, 0, POLAR);
        sector.setAttribute('d', `M${POLAR.cx} ${POLAR.cy} L${a.x.toFixed(1)} ${a.y.toFixed(1)} A${POLAR.radius} ${POLAR.radius} 0 ${bw.widthDeg > 180 ? 1 : 0} 1 ${b.x.toFixed(1)} ${b.y.toFixed(1)} Z`);
        text.textContent = `${bw.widthDeg.toFixed(1)}° (from ${bw.leftDeg.toFixed(1)}° to ${bw.rightDeg.toFixed(1)}°, peak at ${bw.peakDeg.toFixed(1)}°)`;
        text.dataset.deg = String(bw.widthDeg);
      } else {
        sector.setAttribute('d', '');
        text.textContent = points.length === 0 ? '–' : 'not reached yet (the cut does not fall 3 dB below its peak on both sides)';
        delete text.dataset.deg;
      }
    }

    $('cut-select').addEventListener('change', () => {
      const o = cutOptions()[Number($('cut-select').value)];
      if (o) cutChoice = { axis: o.axis, fixedDeg: o.fixedDeg };
      queueDraw();
    });

    // ---- the form
    function planFields() {
      const kind = $('scan-kind').value;
      for (const label of document.querySelectorAll('[data-plans]')) label.hidden = !label.dataset.plans.split(' ').includes(kind);
      const source = $('scan-source').value;
      for (const label of document.querySelectorAll('[data-sources]')) label.hidden = !label.dataset.sources.split(' ').includes(source);
    }
    /** How many points the form's plan has (a range includes its stop when on the grid), said before starting. */
    function countPoints() {
      const n = (text) => {
        const r = P.parseRange(text, '');
        return r instanceof Error ? null : Math.floor(Math.abs(r.stop_deg - r.start_deg) / r.step_deg + 1e-9) + 1;
      };
      const list = (text) => {
        const a = P.parseAngles(text, '');
        return a instanceof Error ? null : a.length;
      };
      const kind = $('scan-kind').value;
      const [a, b] =
        kind === 'grid' ? [n($('scan-theta').value), n($('scan-phi').value)] : kind === 'phi_cuts' ? [n($('scan-theta').value), list($('scan-phi-list').value)] : [n($('scan-phi').value), list($('scan-theta-list').value)];
      $('scan-count').textContent = a && b ? `${a * b} points` : '';
    }
    $('scan-kind').addEventListener('change', planFields);
    $('scan-source').addEventListener('change', planFields);
    $('scan-form').addEventListener('input', countPoints);
    $('scan-kind').addEventListener('change', countPoints);
    planFields();
    countPoints();

    function field(result, input) {
      input.setAttribute('aria-invalid', result instanceof Error ? 'true' : 'false');
      if (result instanceof Error) {
        showError(result.message);
        return null;
      }
      return result;
    }

    function buildRequest() {
      const kind = $('scan-kind').value;
      let plan;
      if (kind === 'grid') {
        const theta = field(P.parseRange($('scan-theta').value, 'θ'), $('scan-theta'));
        const phi = theta && field(P.parseRange($('scan-phi').value, 'φ'), $('scan-phi'));
        if (!theta || !phi) return null;
        plan = { kind, theta, phi };
      } else if (kind === 'phi_cuts') {
        const theta = field(P.parseRange($('scan-theta').value, 'θ'), $('scan-theta'));
        const phiList = theta && field(P.parseAngles($('scan-phi-list').value, 'the φ of the cuts'), $('scan-phi-list'));
        if (!theta || !phiList) return null;
        plan = { kind, phi_deg: phiList, theta };
      } else {
        const phi = field(P.parseRange($('scan-phi').value, 'φ'), $('scan-phi'));
        const thetaList = phi && field(P.parseAngles($('scan-theta-list').value, 'the θ of the cuts'), $('scan-theta-list'));
        if (!phi || !thetaList) return null;
        plan = { kind, theta_deg: thetaList, phi };
      }
      const settle = numberField($('scan-settle'), 0, 3600, 'settle time (s)');
      const count = settle === null ? null : numberField($('scan-samples'), 1, 1000, 'samples per point');
      if (settle === null || count === null) return null;
      const request = { plan, settle_s: settle, samples: Math.round(count) };
      const source = $('scan-source').value;
      const arg = $('scan-source-arg').value.trim();
      if (source !== 'sim' && arg === '') {
        $('scan-source-arg').setAttribute('aria-invalid', 'true');
        showError(source === 'exec' ? 'give the command that prints the measurement, e.g. ./measure.sh' : 'give the webhook URL, e.g. http://127.0.0.1:9000/measure');
        return null;
      }
      if (source === 'exec') request.source = { kind: 'exec', command: arg };
      else if (source === 'http') request.source = { kind: 'http', url: arg };
      else request.source = { kind: 'sim' };
      return request;
    }

    $('scan-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const request = buildRequest();
      if (!request) return;
      const r = await api('POST', '/scan', request);
      if (r) onScan(r);
    });
    $('scan-pause').addEventListener('click', async () => {
      const r = await api('POST', '/scan/pause');
      if (r) onScan(r);
    });
    $('scan-resume').addEventListener('click', async () => {
      const r = await api('POST', '/scan/resume');
      if (r) onScan(r);
    });

    /** Scans exist on this server when its OpenAPI document lists them (older servers: the card says so). */
    async function start() {
      drawPolarGrid();
      reset(null);
      const doc = await fetch('openapi.json').then((r) => r.json()).catch(() => null);
      available = Boolean(doc && doc.paths && doc.paths['/scan']);
      $('scan-unavailable').hidden = available;
      for (const id of ['scan-form', 'scan-progress', 'scan-plots']) $(id).hidden = !available;
      if (!available) return;
      const r = await fetch('scan').catch(() => null);
      if (r && r.status === 404) {
        // Described, but not served here (a server built without scans).
        available = false;
        $('scan-unavailable').hidden = false;
        for (const id of ['scan-form', 'scan-progress', 'scan-plots']) $(id).hidden = true;
        return;
      }
      if (!r || !r.ok) return;
      const sc = await r.json();
      if (sc && typeof sc.id === 'string') onScan(sc);
      else showProgress(null);
    }

    return { onScan, onSample, start, reconnected: () => (resync = true) };
  })();
  void scan.start();

  // ---- live feed ---------------------------------------------------------
  let retryMs = 500;
  function connect() {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
    const ws = new WebSocket(url);
    ws.onopen = () => {
      retryMs = 500;
      scan.reconnected();
      $('link').dataset.link = 'up';
      $('link').textContent = 'live';
      log('live feed connected');
    };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === 'status') applyStatus(m);
      else if (m.type === 'config') applyConfig(m);
      else if (m.type === 'scan') scan.onScan(m);
      else if (m.type === 'sample') scan.onSample(m);
    };
    ws.onclose = () => {
      setOnline(false);
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
      setOnline(false);
      showError(`cannot reach the positioner (${e.message}); is the server running?`);
      return null;
    }
    const data = await res.json().catch(() => ({}));
    setOnline(true);
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
    for (const axis of ['theta', 'phi']) $(`target-${axis}-text`).textContent = `${fmt(target[axis])}°`;
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
