// tempsched_lab: the interactive timeline (front end of widgets/timeline_widget.py).
//
// One store per widget model holds the event-log rows received so far (columns in typed
// arrays, 33 bytes a row on the wire) and the runs built from them, keyed like the static
// plot's runs: (task, due). Each view draws the store on a <canvas>: only the lanes on screen
// (lane virtualisation) and only the runs inside the time range (binary search per lane);
// runs narrower than a pixel are merged, so a frame costs about one rectangle per pixel
// column and lane however many runs there are. Colours and glyphs come from the Python side
// (the plots' palette and mark table), so the canvas and the PNG timeline agree.

const PT = 100 / 72; // px per point: the PNG timeline is drawn at 100 dpi and shown unscaled
const BAR_HALF = 0.22; // bar half-height, in lanes (plots.timeline.layers.BAR_HALF)
const REARM_OFFSET = 0.32; // a periodic re-arm's decision dot, below the lane
const SCROLL_W = 10;
// The type scale (the widget's `type_scale` trait): text sizes in CSS px and the geometry that
// fits them. Default: no text under 12 px; projector: none under 16 px (read from the back of
// a classroom). A lane is 26 px as in the PNG timeline (0.26 in at 100 dpi).
const SCALES = {
  default: { lane: 26, axis: 30, gutter: 170, text: 12, glyph: 1 },
  projector: { lane: 34, axis: 38, gutter: 230, text: 16, glyph: 4 / 3 },
};
// At most this share of the extent is added around the run when zoomed all the way out.
const EXTENT_MARGIN = 0.06;
const DETAIL_LIMIT = 3000; // above this many runs on screen, small marks are left out (as the plot)
// anywidget hands initialize() and render() different proxies of one model: stores are found by
// the widget's own id (a trait set in Python)
const STORES = new Map();

// -- the store: rows and runs, per model ----------------------------------------------------

// The row kinds' codes, by name, from the schema's kinds in code order (the widget's `kinds`).
function kindCodes(kinds) {
  if (!Array.isArray(kinds) || !kinds.length) throw new Error('timeline: the kernel sent no row kinds');
  return Object.fromEntries(kinds.map((name, code) => [name, code]));
}

class Store {
  constructor(model) {
    this.model = model;
    // What the rows mean comes from the kernel with the widget, never repeated here: the
    // schema's kind codes (`kinds`), the feed's flag bits (`flags`), the decision cases that
    // store a task (`adding_cases`).
    this.K = kindCodes(model.get('kinds'));
    this.F = model.get('flags');
    this.adds = new Set(model.get('adding_cases'));
    this.views = new Set();
    this.hover = new Map();
    this.token = Math.random().toString(36).slice(2);
    this.synced = false; // the page's first reset has arrived
    this.needAsked = 0;
    this.reset(0, [], []);
  }

  reset(first, labels, lanes) {
    this.first = first;
    this.n = 0;
    this.cap = 0;
    this.t = new Float64Array(0);
    this.due = new Float64Array(0);
    this.task = new Int32Array(0);
    this.dup = new Int32Array(0);
    this.label = new Int32Array(0);
    this.lane = new Uint16Array(0);
    this.kind = new Uint8Array(0);
    this.cas = new Int8Array(0);
    this.flags = new Uint8Array(0);
    this.labels = labels.slice();
    this.laneNames = lanes.slice();
    this.runs = [];
    this.byKey = new Map();
    this.taskLanes = []; // lane order: tasks by first appearance
    this.taskInfo = new Map(); // task -> {lane, runs[], dups[], cancels[], missed[], span, open}
    this.threadLanes = []; // lane order: thread/worker names by first use
    this.threadInfo = new Map(); // lane name index -> {runs[], span, open}
    this.threadDirty = false;
    this.rejects = [];
    this.tMin = Infinity;
    this.tMax = -Infinity;
    this.dueMax = -Infinity; // the latest due time asked for: pending work widens the view
    this.rowsApplied = 0;
    this.started = 0; // runs that started (a start row, or an Event set): the status counts these
  }

  get next() { return this.first + this.n; }

  grow(need) {
    if (need <= this.cap) return;
    let cap = Math.max(1024, this.cap);
    while (cap < need) cap *= 2;
    const widen = (old, Type) => { const a = new Type(cap); a.set(old.subarray(0, this.n)); return a; };
    this.t = widen(this.t, Float64Array); this.due = widen(this.due, Float64Array);
    this.task = widen(this.task, Int32Array); this.dup = widen(this.dup, Int32Array);
    this.label = widen(this.label, Int32Array); this.lane = widen(this.lane, Uint16Array);
    this.kind = widen(this.kind, Uint8Array); this.cas = widen(this.cas, Int8Array);
    this.flags = widen(this.flags, Uint8Array);
    this.cap = cap;
  }

  // Append a batch (header + one binary block), skipping rows already held.
  append(msg, view) {
    const count = msg.count;
    for (const name of msg.labels || []) this.labels.push(name);
    for (const name of msg.lanes || []) this.laneNames.push(name);
    const skip = this.next - msg.first;
    if (skip >= count) return 0;
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
    const b = bytes.buffer; // a fresh, aligned copy
    const n = count;
    const cols = {
      t: new Float64Array(b, 0, n), due: new Float64Array(b, 8 * n, n),
      task: new Int32Array(b, 16 * n, n), dup: new Int32Array(b, 20 * n, n),
      label: new Int32Array(b, 24 * n, n), lane: new Uint16Array(b, 28 * n, n),
      kind: new Uint8Array(b, 30 * n, n), cas: new Int8Array(b, 31 * n, n),
      flags: new Uint8Array(b, 32 * n, n),
    };
    const add = count - skip;
    this.grow(this.n + add);
    for (const name of Object.keys(cols)) this[name].set(cols[name].subarray(skip), this.n);
    const from = this.n;
    this.n += add;
    for (let i = from; i < this.n; i++) this.apply(i);
    this.rowsApplied += add;
    return add;
  }

  taskOf(id) {
    let info = this.taskInfo.get(id);
    if (!info) {
      info = { id, lane: this.taskLanes.length, runs: [], dups: [], cancels: [], missed: [],
               span: 0, open: new Set(), tFirst: Infinity, tLast: -Infinity };
      this.taskInfo.set(id, info);
      this.taskLanes.push(id);
    }
    return info;
  }

  threadOf(lane) {
    let info = this.threadInfo.get(lane);
    if (!info) {
      info = { id: lane, runs: [], span: 0, open: new Set() };
      this.threadInfo.set(lane, info);
      this.threadLanes.push(lane);
    }
    return info;
  }

  runOf(i) {
    const task = this.task[i], due = this.due[i];
    const key = task + '|' + due;
    let run = this.byKey.get(key);
    if (run === undefined) {
      run = { task, due, sched: NaN, dispatched: NaN, started: NaN, ended: NaN, evt: NaN,
              cancelled: NaN, dropped: NaN, failed: false, cas: 0, label: this.label[i],
              lane: -1, periodic: false, rows: [-1, -1, -1, -1], t0: this.t[i], thread: null };
      this.byKey.set(key, run);
      this.runs.push(run);
      const info = this.taskOf(task);
      info.runs.push(run);
      info.open.add(run);
    }
    return run;
  }

  close(run, t) {
    const info = this.taskInfo.get(run.task);
    info.open.delete(run);
    info.span = Math.max(info.span, t - run.t0);
    if (run.thread) {
      run.thread.open.delete(run);
      run.thread.span = Math.max(run.thread.span, t - run.started);
    }
  }

  // A row: its effect on the runs, then on the activity span of the task lane it marks.
  apply(i) {
    this.applyRow(i);
    const task = this.task[i], dup = this.dup[i], t = this.t[i];
    for (const id of (dup >= 0 && this.kind[i] === this.K.schedule ? [dup] : [task])) {
      const info = id >= 0 ? this.taskInfo.get(id) : undefined;
      if (!info) continue;
      if (t < info.tFirst) info.tFirst = t;
      if (t > info.tLast) info.tLast = t;
    }
  }

  applyRow(i) {
    const K = this.K, F = this.F;
    const k = this.kind[i], t = this.t[i], seq = this.first + i;
    if (t < this.tMin) this.tMin = t;
    if (t > this.tMax) this.tMax = t;
    const task = this.task[i];
    if (k === K.reject) { this.rejects.push(i); return; }
    if (task < 0) return;
    if (k === K.schedule) {
      if (this.dup[i] >= 0) { this.taskOf(this.dup[i]).dups.push(i); return; }
      if (!this.adds.has(this.cas[i]) || !Number.isFinite(this.due[i])) return;
      const run = this.runOf(i);
      if (this.due[i] > this.dueMax) this.dueMax = this.due[i];
      run.sched = t; run.cas = this.cas[i]; run.rows[0] = seq;
      run.periodic = (this.flags[i] & F.periodic) !== 0;
      run.label = this.label[i];
      return;
    }
    if (k === K.missed) { this.taskOf(task).missed.push(i); return; }
    if (k === K.cancel) {
      this.taskOf(task).cancels.push(i);
      if ((this.flags[i] & F.removed) && Number.isFinite(this.due[i])) {
        const run = this.runOf(i);
        run.cancelled = t; run.rows[3] = seq; this.close(run, t);
      }
      return;
    }
    if (!Number.isFinite(this.due[i]) || k === K.wake) return;
    if (k === K.shutdown) {
      if (this.flags[i] & F.dropped) { const run = this.runOf(i); run.dropped = t; run.rows[3] = seq; this.close(run, t); }
      return;
    }
    const run = this.runOf(i);
    if (k === K.dispatch) { run.dispatched = t; run.rows[1] = seq; return; }
    const lane = this.lane[i];
    if (k === K.start || k === K.event_set) {
      if (!Number.isFinite(run.started) && !Number.isFinite(run.evt)) this.started++;
      if (k === K.start) { run.started = t; run.rows[2] = seq; } else { run.evt = t; run.rows[3] = seq; }
      if (lane !== this.noLane) {
        run.lane = lane;
        const th = this.threadOf(lane);
        run.thread = th;
        if (k === K.start) { th.runs.push(run); th.open.add(run); } else { th.runs.push(run); }
      }
      if (k === K.event_set) this.close(run, t);
      return;
    }
    if (k === K.finish || k === K.error) {
      run.ended = t; run.rows[3] = seq; run.failed = k === K.error;
      if (lane !== this.noLane && lane !== run.lane) { // a Dask worker: its lane, not the thread
        if (run.thread) run.thread.open.delete(run);
        run.lane = lane;
        this.threadDirty = true;
      }
      this.close(run, t);
    }
  }

  // Thread lanes after runs moved to their worker's lane: rebuilt, sorted by start.
  threadLanesNow() {
    if (this.threadDirty) {
      this.threadInfo = new Map();
      this.threadLanes = [];
      const ordered = this.runs.filter(r => r.lane >= 0).sort((a, b) => (a.started || a.evt) - (b.started || b.evt));
      for (const run of ordered) {
        const th = this.threadOf(run.lane);
        run.thread = th;
        th.runs.push(run);
        const end = runEnd(run);
        if (Number.isFinite(end)) th.span = Math.max(th.span, end - (run.started || run.evt));
        else th.open.add(run);
      }
      this.threadDirty = false;
    }
    return this.threadLanes;
  }

  changed() { for (const v of this.views) v.invalidate(); }
}

// The row a run's bar stands for: its end (finish or error) row, else its start row.
function runSeq(run) { return run.rows[3] >= 0 ? run.rows[3] : run.rows[2]; }

function runEnd(run) {
  if (Number.isFinite(run.ended)) return run.ended;
  if (Number.isFinite(run.evt)) return run.evt;
  if (Number.isFinite(run.cancelled)) return run.cancelled;
  if (Number.isFinite(run.dropped)) return run.dropped;
  return NaN;
}

// The wait line's end, as the static plot: start, else Event set, cancel, drop, dispatch, due.
function waitEnd(run) {
  for (const x of [run.started, run.evt, run.cancelled, run.dropped, run.dispatched, run.due]) {
    if (Number.isFinite(x)) return x;
  }
  return NaN;
}

// -- time language ---------------------------------------------------------------------------

function pad(n, w) { return String(n).padStart(w, '0'); }

function niceStep(raw) {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const f of [1, 2, 5, 10]) if (f * p >= raw * (1 - 1e-9)) return f * p;
  return 10 * p;
}

function fmtTick(model, v, step) {
  if (model.get('time_style') === 'wall') {
    const abs = model.get('origin') + v;
    const d = new Date(abs * 1000);
    let s = pad(d.getHours(), 2) + ':' + pad(d.getMinutes(), 2) + ':' + pad(d.getSeconds(), 2);
    if (step < 1) s += '.' + pad(Math.round((abs - Math.floor(abs)) * 1000) % 1000, 3).slice(0, step < 0.01 ? 3 : step < 0.1 ? 2 : 1);
    return s;
  }
  const digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
  return v.toFixed(digits);
}

function fmtAt(model, v) {
  if (model.get('time_style') === 'wall') return fmtTick(model, v, 0.001);
  return 't = ' + v.toFixed(3) + ' s';
}

// -- glyphs: matplotlib's markers on a canvas ------------------------------------------------

function glyph(ctx, mark, x, y, fill, zoom = 1) {
  const d = Math.sqrt(mark.size) * PT * zoom; // marker width in px
  const r = d / 2;
  const face = mark.face === null || mark.face === undefined ? fill : mark.face;
  const edge = mark.edge;
  ctx.lineWidth = Math.max(mark.linewidth * PT, 0.8);
  ctx.strokeStyle = edge;
  ctx.beginPath();
  switch (mark.marker) {
    case 'o': ctx.arc(x, y, r, 0, 2 * Math.PI); break;
    case 'v': ctx.moveTo(x - r, y - r * 0.6); ctx.lineTo(x + r, y - r * 0.6); ctx.lineTo(x, y + r * 0.9); ctx.closePath(); break;
    case 's': ctx.rect(x - r * 0.8, y - r * 0.8, r * 1.6, r * 1.6); break;
    case 'D': ctx.moveTo(x, y - r); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r); ctx.lineTo(x - r, y); ctx.closePath(); break;
    case '*': for (let j = 0; j < 10; j++) {
        const a = -Math.PI / 2 + j * Math.PI / 5, rr = j % 2 ? r * 0.42 : r;
        j ? ctx.lineTo(x + rr * Math.cos(a), y + rr * Math.sin(a)) : ctx.moveTo(x + rr * Math.cos(a), y + rr * Math.sin(a));
      } ctx.closePath(); break;
    case '|': ctx.moveTo(x, y - r); ctx.lineTo(x, y + r); ctx.stroke(); return;
    case 'x': ctx.strokeStyle = face === 'none' ? edge : (mark.face || edge);
      ctx.moveTo(x - r * 0.6, y - r * 0.6); ctx.lineTo(x + r * 0.6, y + r * 0.6);
      ctx.moveTo(x + r * 0.6, y - r * 0.6); ctx.lineTo(x - r * 0.6, y + r * 0.6); ctx.stroke(); return;
    case 'X': { const a = r * 0.75, w = r * 0.3;
      ctx.moveTo(x - a, y - a + w); ctx.lineTo(x - w, y); ctx.lineTo(x - a, y + a - w); ctx.lineTo(x - a + w, y + a);
      ctx.lineTo(x, y + w); ctx.lineTo(x + a - w, y + a); ctx.lineTo(x + a, y + a - w); ctx.lineTo(x + w, y);
      ctx.lineTo(x + a, y - a + w); ctx.lineTo(x + a - w, y - a); ctx.lineTo(x, y - w); ctx.lineTo(x - a + w, y - a);
      ctx.closePath(); break; }
    case '$!$': ctx.font = 'bold ' + Math.round(r * 1.5) + 'px sans-serif'; ctx.textAlign = 'center';
      ctx.textBaseline = 'middle'; ctx.lineWidth = 3; ctx.strokeStyle = 'white'; ctx.strokeText('!', x, y);
      ctx.fillStyle = edge; ctx.fillText('!', x, y); return;
    default: // '$\\oslash$': a circle with a slash
      ctx.arc(x, y, r * 0.55, 0, 2 * Math.PI); ctx.moveTo(x - r * 0.7, y + r * 0.7); ctx.lineTo(x + r * 0.7, y - r * 0.7);
      ctx.stroke(); return;
  }
  if (face && face !== 'none') { ctx.fillStyle = face; ctx.fill(); }
  ctx.stroke();
}

// -- one view: toolbar, canvas, tooltip, legend ----------------------------------------------

class View {
  constructor(model, el, store) {
    this.model = model;
    this.store = store;
    this.el = el;
    el.classList.add('tsl-tl');
    this.theme = readTheme(el);
    // the host's theme switch (an attribute of <body> or <html>) re-themes the canvas at once
    this.themeWatch = new MutationObserver(() => { this.theme = readTheme(el); this.invalidate(); });
    for (const node of [document.body, document.documentElement]) {
      this.themeWatch.observe(node, { attributes: true, attributeFilter: ['data-jp-theme-light', 'data-vscode-theme-kind', 'theme', 'class'] });
    }
    el.innerHTML = '';
    const bar = document.createElement('div');
    bar.className = 'tsl-tl-bar';
    this.followBtn = button(bar, 'follow now', 'tsl-tl-follow', 'keep the right edge at now');
    this.resetBtn = button(bar, 'reset', 'tsl-tl-reset', 'whole run, follow now, no task selected');
    this.taskBtn = button(bar, 'by task', 'tsl-tl-lanes-task', 'one lane per task');
    this.threadBtn = button(bar, 'by thread', 'tsl-tl-lanes-thread', 'one lane per executor thread (or Dask worker)');
    this.status = document.createElement('span');
    this.status.className = 'tsl-tl-status';
    bar.appendChild(this.status);
    el.appendChild(bar);
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'tsl-tl-canvas';
    el.appendChild(this.canvas);
    this.tip = document.createElement('div');
    this.tip.className = 'tsl-tl-tip';
    el.appendChild(this.tip);
    this.legend = document.createElement('div');
    this.legend.className = 'tsl-tl-legend';
    el.appendChild(this.legend);
    this.ctx = this.canvas.getContext('2d');
    this.applyScale();
    this.v0 = 0; this.v1 = 1; // the visible time range (seconds since origin)
    this.scroll = 0; // first lane shown
    this.stick = true; // the view shows the first lanes (the busy ones) until lanes are scrolled by hand
    this.fontMin = Infinity; // the smallest text drawn in the last frame (px), for tests
    this.laneCache = null;
    this.pending = false;
    this.drag = null;
    this.hit = null; // what the pointer is over
    this.drawTimes = [];
    this.frames = 0;
    this.lastSent = 0;
    this.width = 800;
    this.applyModelView();
    this.wire();
    this.buildLegend();
    this.resize();
  }

  // -- model <-> view
  applyModelView() {
    const view = this.model.get('view') || [0, 0];
    if (view[1] > view[0] && !this.model.get('follow')) { this.v0 = view[0]; this.v1 = view[1]; }
    else this.autoRange();
  }

  // The type scale: geometry and text sizes (default: 12 px text; projector: 16 px).
  applyScale() {
    const name = this.model.get('type_scale') === 'projector' ? 'projector' : 'default';
    this.g = SCALES[name];
    this.el.classList.toggle('tsl-tl-projector', name === 'projector');
    const el = this.el;
    el.dataset.gutter = String(this.g.gutter); el.dataset.axis = String(this.g.axis);
    el.dataset.laneh = String(this.g.lane); el.dataset.scale = name;
  }

  font(ctx, px, bold) { // every text on the canvas is set here: the smallest is kept for tests
    ctx.font = (bold ? 'bold ' : '') + px + 'px sans-serif';
    if (px < this.fontMin) this.fontMin = px;
  }

  // The whole run: from the origin (or the first row) to now, the last row, or pending due
  // times (up to the logged span again, at least 5 s, past the end), with a small margin.
  extent() {
    const s = this.store, now = this.model.get('now');
    const end = Math.max(now, Number.isFinite(s.tMax) ? s.tMax : 0);
    const start = Math.min(0, Number.isFinite(s.tMin) ? s.tMin : 0);
    const logged = Math.max(end - start, 1);
    const until = Number.isFinite(s.dueMax) ? Math.min(s.dueMax, end + Math.max(logged, 5)) : end;
    const span = Math.max(until, end, start + 1e-3) - start;
    return [start - span * 0.02, start + span * 1.04];
  }

  // The widest view zoom-out may reach: the extent plus EXTENT_MARGIN of it.
  maxWidth() { const [a, b] = this.extent(); return (b - a) * (1 + EXTENT_MARGIN); }

  autoRange() {
    const s = this.store, now = this.model.get('now');
    const end = Math.max(now, Number.isFinite(s.tMax) ? s.tMax : 0);
    const start = Math.min(0, Number.isFinite(s.tMin) ? s.tMin : 0);
    const win = this.model.get('window');
    if (win > 0) { // a window ending at now; while the run is younger, it starts at the origin
      if (end - win < start) { this.v0 = start; this.v1 = start + win; }
      else { this.v1 = end + win * 0.02; this.v0 = this.v1 - win; }
      return;
    }
    [this.v0, this.v1] = this.extent();
  }

  // Reset: the whole run, following now, no task selected, from the first lane.
  reset() {
    const m = this.model;
    m.set('window', 0); m.set('follow', true); m.set('selected', -1);
    this.stick = true; this.scroll = 0; this.autoRange();
    m.set('view', [this.v0, this.v1]); m.save_changes(); this.invalidate();
  }

  sendView(force) {
    const now = performance.now();
    if (!force && now - this.lastSent < 250) { // at most 4 messages a second while dragging
      clearTimeout(this.viewTimer);
      this.viewTimer = setTimeout(() => this.sendView(true), 260);
      return;
    }
    this.lastSent = now;
    this.model.set('view', [this.v0, this.v1]);
    this.model.save_changes();
  }

  setFollow(on) {
    if (this.model.get('follow') === on) return;
    this.model.set('follow', on);
    this.model.save_changes();
  }

  wire() {
    const m = this.model, c = this.canvas;
    this.onChange = () => { this.updateButtons(); this.invalidate(); };
    this.onView = () => {
      const v = m.get('view') || [0, 0];
      if (m.get('follow') || !(v[1] > v[0])) return;
      if (Math.abs(v[0] - this.v0) > 1e-9 || Math.abs(v[1] - this.v1) > 1e-9) {
        this.v0 = v[0]; this.v1 = v[1]; this.invalidate();
      }
    };
    m.on('change:view', this.onView);
    for (const name of ['now', 'seq', 'follow', 'lanes', 'selected', 'window', 'time_style', 'height']) {
      m.on('change:' + name, this.onChange);
    }
    this.onScale = () => { this.applyScale(); this.buildLegend(); this.resize(); };
    m.on('change:type_scale', this.onScale);
    this.followBtn.onclick = () => {
      this.setFollow(!m.get('follow'));
      if (m.get('follow')) { this.stick = true; this.sendView(true); }
    };
    this.resetBtn.onclick = () => this.reset();
    this.taskBtn.onclick = () => { m.set('lanes', 'task'); this.scroll = 0; this.stick = true; m.save_changes(); };
    this.threadBtn.onclick = () => { m.set('lanes', 'thread'); this.scroll = 0; this.stick = true; m.save_changes(); };
    c.addEventListener('wheel', e => this.onWheel(e), { passive: false });
    c.addEventListener('pointerdown', e => this.onDown(e));
    c.addEventListener('pointermove', e => this.onMove(e));
    c.addEventListener('pointerup', e => this.onUp(e));
    c.addEventListener('pointerleave', () => { if (!this.drag) this.setHit(null); });
    this.resizer = new ResizeObserver(() => this.resize());
    this.resizer.observe(this.el);
  }

  destroy() {
    const m = this.model;
    m.off('change:view', this.onView);
    for (const name of ['now', 'seq', 'follow', 'lanes', 'selected', 'window', 'time_style', 'height']) {
      m.off('change:' + name, this.onChange);
    }
    m.off('change:type_scale', this.onScale);
    this.themeWatch.disconnect();
    this.resizer.disconnect();
    this.store.views.delete(this);
  }

  updateButtons() {
    const m = this.model;
    this.followBtn.classList.toggle('tsl-on', !!m.get('follow'));
    this.taskBtn.classList.toggle('tsl-on', m.get('lanes') === 'task');
    this.threadBtn.classList.toggle('tsl-on', m.get('lanes') === 'thread');
  }

  // The canvas fits its lanes: the axis and one row per lane, at most the model's `height`.
  fitHeight(count) {
    const cap = this.model.get('height');
    const most = Math.max(1, Math.floor((cap - this.g.axis) / this.g.lane));
    return this.g.axis + Math.min(Math.max(count, 2), most) * this.g.lane + 2;
  }

  resize() {
    const w = Math.max(320, Math.floor(this.el.clientWidth || 800));
    const h = this.fitHeight(this.laneList().count);
    const dpr = window.devicePixelRatio || 1;
    this.width = w; this.height = h;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.canvas.style.width = w + 'px';
    this.canvas.style.height = h + 'px';
    this.dpr = dpr;
    this.invalidate();
  }

  invalidate() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.draw(); });
  }

  // -- geometry
  plotX0() { return this.g.gutter; }
  plotX1() { return this.width - SCROLL_W - 4; }
  x(t) { return this.g.gutter + (t - this.v0) / (this.v1 - this.v0) * (this.plotX1() - this.g.gutter); }
  t(x) { return this.v0 + (x - this.g.gutter) / (this.plotX1() - this.g.gutter) * (this.v1 - this.v0); }
  lanesOnScreen() { return Math.max(1, Math.floor((this.height - this.g.axis) / this.g.lane)); }

  // The lanes of the current view: [{label, info}]. By task, lanes follow activity (the rule
  // of docs/widgets.md, "Lanes by activity"): a "rejected requests" row when a rejection is in
  // view; then the busy tasks, those running in the visible time range or due in it (a pending
  // run that is overdue counts: it is waiting to run), so a recurring task keeps its lane while
  // it keeps running, ordered by what happens now: a task just scheduled, then running, then
  // due soonest, then finished in view (nowRank); then the tasks with anything else in view, in
  // order of first appearance. Every other task is folded
  // into one last row ("+ 12 tasks, nothing in view"), so no lane on screen is empty.
  laneList() {
    const s = this.store, m = this.model;
    if (m.get('lanes') === 'thread') {
      const ids = s.threadLanesNow();
      return { rejectRow: false, count: ids.length, folded: 0, busy: ids.length,
               get: i => ({ label: s.laneNames[ids[i]] || ('lane ' + ids[i]), info: s.threadInfo.get(ids[i]) }) };
    }
    const key = s.rowsApplied + '|' + s.first + '|' + this.v0 + '|' + this.v1 + '|' + s.taskLanes.length + '|' + m.get('now');
    let c = this.laneCache;
    if (!c || c.key !== key || c.store !== s) {
      const v0 = this.v0, v1 = this.v1, fresh = [], busy = [], quiet = [];
      for (const id of s.taskLanes) {
        const info = s.taskInfo.get(id);
        if (!(info.tFirst <= v1 && (info.open.size > 0 || info.tLast >= v0))) continue;
        (this.freshIn(info, v0, v1) ? fresh : this.busyIn(info, v0, v1) ? busy : quiet).push(id);
      }
      // busy lanes by what happens now: running, then due soonest first, then the busy ones that
      // only finished in view (a sort keeps first appearance within a rank)
      const now = m.get('now');
      const ranked = busy.map((id, order) => [this.nowRank(s.taskInfo.get(id), now), order, id]);
      ranked.sort((a, b) => a[0][0] - b[0][0] || a[0][1] - b[0][1] || a[1] - b[1]);
      busy.length = 0;
      for (const r of ranked) busy.push(r[2]);
      busy.unshift(...fresh);
      let rejectRow = false; // rejections are logged in time order: a binary search finds one in view
      const rj = s.rejects;
      let lo = 0, hi = rj.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (s.t[rj[mid]] < v0) lo = mid + 1; else hi = mid; }
      if (lo < rj.length && s.t[rj[lo]] <= v1) rejectRow = true;
      const active = busy.concat(quiet);
      c = this.laneCache = { key, store: s, active, busy: busy.length, rejectRow, folded: s.taskLanes.length - active.length };
    }
    const { active, rejectRow, folded } = c;
    const top = rejectRow ? 1 : 0;
    return { rejectRow, folded, busy: c.busy, count: top + active.length + (folded ? 1 : 0),
             get: i => {
               if (rejectRow && i === 0) return { label: 'rejected requests', info: null, kind: 'reject' };
               if (i - top >= active.length) {
                 return { label: `+ ${folded.toLocaleString()} task${folded === 1 ? '' : 's'}, nothing in view`, info: null, kind: 'fold' };
               }
               const id = active[i - top];
               const info = s.taskInfo.get(id);
               const run = info.runs[0];
               const name = run ? s.labels[run.label] : undefined;
               return { label: (name ? name + ' ' : '') + '#' + id, info, busy: i - top < c.busy };
             } };
  }

  // What a task is doing now, as [rank, key]: [0, start] running, [1, due] waiting to run
  // (due soonest first; overdue counts), [2, 0] neither (its runs in view have finished).
  nowRank(info, now) {
    let due = Infinity;
    for (const r of info.open) {
      const start = Number.isFinite(r.started) ? r.started : r.evt;
      if (Number.isFinite(start) && start <= now) return [0, start];
      if (Number.isFinite(r.due)) due = Math.min(due, r.due);
    }
    return Number.isFinite(due) ? [1, due] : [2, 0];
  }

  // Is a task just queued: a pending run, not a periodic re-arm, whose schedule() call is in
  // the last tenth of the visible span before now? Its lane comes first, so the task a user has
  // just scheduled shows at once, even when the view holds many busy lanes.
  freshIn(info, v0, v1) {
    const now = this.model.get('now'), recent = now - (v1 - v0) / 10;
    for (const r of info.open) {
      if (Number.isFinite(r.started) || Number.isFinite(r.evt) || r.periodic) continue;
      if (r.sched >= recent && r.sched >= v0 && r.sched <= v1) return true;
    }
    return false;
  }

  // Is a task busy in [v0, v1]: a run of it running there (its bar overlaps the range) or due
  // there, or a pending run overdue by then (waiting for its executor)?
  busyIn(info, v0, v1) {
    const now = this.model.get('now');
    for (const r of info.open) { // pending or running: these reach now
      const start = Number.isFinite(r.started) ? r.started : r.evt;
      if (Number.isFinite(start)) { if (start <= v1 && now >= v0) return true; continue; }
      if (Number.isFinite(r.due) && r.due <= v1 && Math.max(r.due, now) >= v0) return true;
    }
    for (const r of this.visibleRuns(info, false, v0, v1)) {
      if (Number.isFinite(r.due) && r.due >= v0 && r.due <= v1) return true;
      const start = Number.isFinite(r.started) ? r.started : r.evt;
      if (!Number.isFinite(start) || start > v1) continue;
      const end = runEnd(r);
      if (!Number.isFinite(end) || end >= v0) return true;
    }
    return false;
  }

  // The lane labels drawn in the last frame, top to bottom, as the user reads them (for tests).
  drawnLabels() { return (this.rows || []).map(row => row.lane.label); }

  // The row of task `id` on screen: its y (px from the canvas top), or null (for tests).
  laneY(id) {
    for (const row of this.rows || []) if (row.lane.info && row.lane.info.id === id) return row.y;
    return null;
  }

  clampScroll(lanes) {
    const most = Math.max(0, lanes.count - this.lanesOnScreen());
    // until lanes are scrolled by hand, the first lane shows: the busy lanes come first, so
    // following now never scrolls them away, and a new task that runs or falls due shows at once
    if (this.stick) this.scroll = 0;
    this.scroll = Math.max(0, Math.min(most, this.scroll));
  }

  // Runs of a lane that may show in [v0, v1]: binary search on the first time of each run.
  visibleRuns(info, thread, v0 = this.v0, v1 = this.v1) {
    const runs = info.runs;
    const key = thread ? (r => (Number.isFinite(r.started) ? r.started : r.evt)) : (r => r.t0);
    const from = v0 - info.span;
    let lo = 0, hi = runs.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (key(runs[mid]) < from) lo = mid + 1; else hi = mid; }
    let end = runs.length; // the first run starting after v1, by binary search as well
    for (let a = lo; a < end;) { const mid = (a + end) >> 1; if (key(runs[mid]) <= v1) a = mid + 1; else end = mid; }
    const out = runs.slice(lo, end);
    for (const r of info.open) if (key(r) < from) out.push(r); // open runs reach now
    return out;
  }

  // -- drawing
  draw() {
    const started = performance.now();
    const m = this.model, s = this.store, ctx = this.ctx;
    if (m.get('follow')) this.autoRange();
    const lanes = this.laneList();
    if (this.fitHeight(lanes.count) !== this.height) this.resize(); // the canvas fits its lanes
    this.fontMin = Infinity;
    this.clampScroll(lanes);
    const pal = m.get('palette'), marks = m.get('marks');
    const caseColor = c => (pal.case[String(c)] || pal.neutral.unknown);
    const now = m.get('now');
    const thread = m.get('lanes') === 'thread';
    const selected = m.get('selected');
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, this.width, this.height);
    const th = this.theme;
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, this.width, this.height);
    this.drawAxis(ctx, pal);
    const x0 = this.g.gutter, x1 = this.plotX1();
    const shown = Math.min(this.lanesOnScreen(), lanes.count - this.scroll);
    let drawnRuns = 0;
    const rows = [];
    for (let j = 0; j < shown; j++) {
      const lane = lanes.get(this.scroll + j);
      const y = this.g.axis + j * this.g.lane + this.g.lane / 2;
      rows.push({ lane, y, runs: lane.info ? this.visibleRuns(lane.info, thread) : null });
      if (rows[j].runs) drawnRuns += rows[j].runs.length;
    }
    const detailed = drawnRuns <= DETAIL_LIMIT;
    this.hits = [];
    ctx.save();
    ctx.beginPath(); ctx.rect(x0, this.g.axis, x1 - x0, this.height - this.g.axis); ctx.clip();
    for (const row of rows) {
      const { lane, y } = row;
      if (selected >= 0 && lane.info && lane.info.id === selected && !thread) {
        ctx.fillStyle = this.theme.headBg;
        ctx.fillRect(x0, y - this.g.lane / 2, x1 - x0, this.g.lane);
      }
      if (lane.kind === 'fold') continue;
      if (!lane.info) { this.drawRejects(ctx, y, marks, caseColor); continue; }
      this.drawLane(ctx, row.runs, lane.info, y, thread, detailed, selected, marks, pal, caseColor, now);
    }
    // now: a dashed line
    const xn = this.x(now);
    if (xn >= x0 && xn <= x1) {
      ctx.strokeStyle = pal.neutral.line; ctx.lineWidth = 1; ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.moveTo(xn, this.g.axis); ctx.lineTo(xn, this.height); ctx.stroke(); ctx.setLineDash([]);
    }
    ctx.restore();
    // lane labels (the type scale's size) and the scroll bar
    ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
    for (const row of rows) {
      const sel = selected >= 0 && row.lane.info && row.lane.info.id === selected && !thread;
      const fold = row.lane.kind === 'fold';
      ctx.fillStyle = sel ? this.theme.headFg : (fold ? this.theme.muted : this.theme.fg);
      this.font(ctx, this.g.text, sel);
      if (fold) { ctx.textAlign = 'left'; ctx.fillText(clip(ctx, row.lane.label, this.plotX1() - 12), 6, row.y); ctx.textAlign = 'right'; continue; }
      ctx.fillText(clip(ctx, row.lane.label, this.g.gutter - 10), this.g.gutter - 6, row.y);
    }
    this.drawScrollbar(ctx, lanes);
    const took = performance.now() - started;
    this.drawTimes.push(took);
    if (this.drawTimes.length > 2000) this.drawTimes.splice(0, 1000);
    this.frames++;
    this.rows = rows;
    this.detailed = detailed;
    const el = this.el;
    el.dataset.rows = String(s.n);
    el.dataset.next = String(s.next);
    el.dataset.view0 = this.v0.toFixed(6);
    el.dataset.view1 = this.v1.toFixed(6);
    el.dataset.lanes = String(lanes.count);
    el.dataset.scroll = String(this.scroll);
    el.dataset.runs = String(s.runs.length);
    el.dataset.started = String(s.started);
    el.dataset.folded = String(lanes.folded);
    el.dataset.busy = String(lanes.busy);
    el.dataset.fontmin = String(this.fontMin);
    el.dataset.height = String(this.height);
    el.dataset.now = String(now);
    el.dataset.drawn = String(drawnRuns);
    el.dataset.frames = String(this.frames);
    el.dataset.selected = String(selected);
    const first = lanes.count ? this.scroll + 1 : 0;
    this.status.textContent = `${s.n.toLocaleString()} rows · ${s.started.toLocaleString()} runs started · lanes ${first}–${this.scroll + shown} of ${lanes.count.toLocaleString()} · ${fmtAt(m, this.v0)} to ${fmtAt(m, this.v1)}` + (selected >= 0 ? ` · task #${selected} selected` : '');
    this.updateButtons();
  }

  drawAxis(ctx, pal) {
    const x0 = this.g.gutter, x1 = this.plotX1();
    const step = niceStep((this.v1 - this.v0) / Math.max(2, (x1 - x0) / (90 * this.g.text / 12)));
    ctx.strokeStyle = this.theme.grid; ctx.lineWidth = 1;
    ctx.fillStyle = this.theme.fg; this.font(ctx, this.g.text); ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    for (let v = Math.ceil(this.v0 / step) * step; v <= this.v1; v += step) {
      const x = Math.round(this.x(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, this.g.axis - 4); ctx.lineTo(x, this.height); ctx.stroke();
      ctx.fillText(fmtTick(this.model, Math.abs(v) < step * 1e-6 ? 0 : v, step), x, 3);
    }
    ctx.textAlign = 'left';
    ctx.fillText(this.model.get('time_style') === 'wall' ? 'wall clock' : 't (s)', 6, 4);
    ctx.strokeStyle = pal.neutral.line;
    ctx.beginPath(); ctx.moveTo(x0, this.g.axis - 0.5); ctx.lineTo(x1, this.g.axis - 0.5); ctx.stroke();
  }

  drawScrollbar(ctx, lanes) {
    const x = this.width - SCROLL_W, top = this.g.axis, h = this.height - this.g.axis;
    ctx.fillStyle = this.theme.panelBg; ctx.fillRect(x, top, SCROLL_W, h);
    const shown = this.lanesOnScreen();
    if (lanes.count <= shown) return;
    const th = Math.max(16, h * shown / lanes.count);
    const ty = top + (h - th) * (this.scroll / Math.max(1, lanes.count - shown));
    ctx.fillStyle = this.theme.border; ctx.fillRect(x + 2, ty, SCROLL_W - 4, th);
    this.thumb = { top, h, th };
  }

  drawRejects(ctx, y, marks, caseColor) {
    const s = this.store;
    for (const i of s.rejects) {
      const t = s.t[i];
      if (t < this.v0 || t > this.v1) continue;
      const x = this.x(t);
      glyph(ctx, marks.rejected, x, y, caseColor(s.cas[i]), this.g.glyph);
      this.hits.push({ x, y, r: 7, seq: s.first + i, task: -1 });
    }
  }

  drawLane(ctx, runs, info, y, thread, detailed, selected, marks, pal, caseColor, now) {
    const s = this.store, x0 = this.g.gutter, x1 = this.plotX1();
    const half = BAR_HALF * this.g.lane;
    const dim = r => selected >= 0 && r.task !== selected;
    // waiting lines (task lanes)
    if (!thread) {
      ctx.strokeStyle = pal.neutral.wait; ctx.lineWidth = 1.2 * PT;
      ctx.beginPath();
      for (const r of runs) {
        const from = Number.isFinite(r.sched) ? r.sched : r.dispatched, to = waitEnd(r);
        if (!Number.isFinite(from) || !Number.isFinite(to)) continue;
        ctx.moveTo(Math.max(this.x(from), x0 - 2), y); ctx.lineTo(Math.min(this.x(to), x1 + 2), y);
        this.hits.push({ x: this.x(from), x2: this.x(to), y, r: 3, seq: r.rows[1] >= 0 ? r.rows[1] : r.rows[0], run: r, wait: true });
      }
      ctx.stroke();
    }
    // run bars, merged below one pixel: at most ~one rectangle per pixel column. Zoomed out
    // (not `detailed`), a merged rectangle is one hover target (its first run) rather than
    // one per run, the loop allocates nothing per run, and a pixel already drawn keeps its
    // first run's colour: with the binary searches of visibleRuns, one lane of 100,000 runs
    // draws in 12 ms a frame (p95 21 ms), was 31 ms (p95 41 ms), so panning it keeps 60
    // frames a second (benchmarks/bench_timeline_widget.py, Dec 1 2026).
    const scale = (x1 - this.g.gutter) / (this.v1 - this.v0), v0 = this.v0;
    const colors = [];
    let mx0 = NaN, mx1 = NaN, mcol = null, malpha = 1, mrun = null;
    const flush = () => {
      if (mcol === null) return;
      ctx.globalAlpha = malpha; ctx.fillStyle = mcol;
      ctx.fillRect(mx0, y - half, Math.max(mx1 - mx0, 1), 2 * half);
      if (detailed && mx1 - mx0 > 3) { ctx.strokeStyle = 'white'; ctx.lineWidth = 1; ctx.strokeRect(mx0, y - half, mx1 - mx0, 2 * half); }
      if (!detailed) this.hits.push({ x: mx0, x2: mx1, y, r: half, seq: runSeq(mrun), run: mrun, bar: true });
      ctx.globalAlpha = 1; mcol = null;
    };
    const ticks = [];
    for (const r of runs) {
      const started = r.started;
      if (!Number.isFinite(started)) continue;
      const end = Number.isFinite(r.ended) ? r.ended : now;
      let a = this.g.gutter + (started - v0) * scale, b = this.g.gutter + (Math.max(end, started) - v0) * scale;
      if (b < x0 || a > x1) continue;
      a = Math.max(a, x0 - 1); b = Math.min(b, x1 + 1);
      const col = colors[r.cas] || (colors[r.cas] = caseColor(r.cas));
      const alpha = selected >= 0 && r.task !== selected ? 0.25 : 1;
      if (mcol === col && alpha === malpha && a <= mx1 + 1 && (b - a < 2 || mx1 - mx0 < 2)) { mx1 = Math.max(mx1, b); }
      else if (mcol !== null && b - a < 1 && mx1 - mx0 < 1 && Math.floor(a) === Math.floor(mx0)) {
        mx1 = Math.max(mx1, b); // another run inside the same pixel: that pixel keeps its first colour
      } else { flush(); mx0 = a; mx1 = b; mcol = col; malpha = alpha; mrun = r; }
      if (detailed) {
        ticks.push(a, r);
        this.hits.push({ x: a, x2: b, y, r: half, seq: runSeq(r), run: r, bar: true });
      }
    }
    flush();
    if (!detailed) return;
    for (let i = 0; i < ticks.length; i += 2) {
      ctx.globalAlpha = dim(ticks[i + 1]) ? 0.25 : 1;
      glyph(ctx, marks.starts, ticks[i], y, null, this.g.glyph);
    }
    ctx.globalAlpha = 1;
    if (thread) this.labelBars(ctx, runs, y, caseColor, now);
    for (const r of runs) {
      ctx.globalAlpha = dim(r) ? 0.25 : 1;
      const col = caseColor(r.cas);
      if (!thread) {
        if (Number.isFinite(r.sched)) this.point(ctx, marks.scheduled, r.sched, y + (r.periodic ? REARM_OFFSET * this.g.lane : 0), col, r.rows[0], r);
        if (Number.isFinite(r.due)) this.point(ctx, marks.due, r.due, y - marks.due.y_offset * this.g.lane, null, r.rows[0], r);
        if (Number.isFinite(r.cancelled)) this.point(ctx, marks.cancels, r.cancelled, y, null, r.rows[3], r);
        if (Number.isFinite(r.dropped)) this.point(ctx, marks.drops, r.dropped, y, null, r.rows[3], r);
      }
      if (Number.isFinite(r.evt)) this.point(ctx, marks.event_set, r.evt, y, col, r.rows[3], r);
      if (r.failed) this.point(ctx, marks.errors, r.ended, y, null, r.rows[3], r);
    }
    ctx.globalAlpha = 1;
    if (thread) return;
    const dimTask = selected >= 0 && info.id !== selected;
    for (const i of info.cancels) {
      const t = s.t[i];
      if ((s.flags[i] & s.F.removed) === 0) { ctx.globalAlpha = dimTask ? 0.25 : 1; this.point(ctx, marks.cancels, t, y, null, s.first + i, { task: info.id }); }
    }
    for (const i of info.missed) {
      ctx.globalAlpha = dimTask ? 0.25 : 1;
      this.point(ctx, marks.skipped, s.due[i], y - marks.skipped.y_offset * this.g.lane, null, s.first + i, { task: info.id });
    }
    for (const i of info.dups) { // a duplicate request: a diamond above the task it matched
      const t = s.t[i], due = s.due[i], yy = y - marks.duplicates.y_offset * this.g.lane;
      ctx.globalAlpha = dimTask ? 0.25 : 1;
      if (t <= this.v1 && due >= this.v0) {
        ctx.strokeStyle = pal.neutral.line; ctx.lineWidth = 0.9 * PT;
        ctx.beginPath(); ctx.moveTo(this.x(t), yy); ctx.lineTo(this.x(due), y - 1); ctx.stroke();
      }
      this.point(ctx, marks.duplicates, t, yy, caseColor(s.cas[i]), s.first + i, { task: info.id });
    }
    ctx.globalAlpha = 1;
  }

  point(ctx, mark, t, y, color, seq, run) {
    if (t < this.v0 || t > this.v1) return;
    const x = this.x(t);
    glyph(ctx, mark, x, y, color, this.g.glyph);
    this.hits.push({ x, y, r: Math.max(5, Math.sqrt(mark.size) * PT * this.g.glyph / 2), seq, run });
  }

  labelBars(ctx, runs, y, caseColor, now) {
    const s = this.store;
    this.font(ctx, this.g.text); ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
    let written = 0;
    for (const r of runs) {
      if (!Number.isFinite(r.started) || written > 200) continue;
      const a = Math.max(this.x(r.started), this.g.gutter), b = Math.min(this.x(Number.isFinite(r.ended) ? r.ended : now), this.plotX1());
      const name = s.labels[r.label];
      const text = (name ? name + ' ' : '') + '#' + r.task;
      if (b - a < ctx.measureText(text).width + 8) continue;
      const col = caseColor(r.cas);
      ctx.fillStyle = textOn(col);
      ctx.fillText(text, (a + b) / 2, y);
      written++;
    }
  }

  // -- pointer
  pos(e) { const r = this.canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }

  onWheel(e) {
    e.preventDefault();
    const [px, py] = this.pos(e);
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      if (e.shiftKey && !e.deltaX) { this.stick = false; this.scroll += Math.sign(e.deltaY) * 3; this.invalidate(); return; }
      const dt = (e.deltaX || e.deltaY) / (this.plotX1() - this.g.gutter) * (this.v1 - this.v0);
      this.v0 += dt; this.v1 += dt; this.setFollow(false); this.sendView(false); this.invalidate(); return;
    }
    const factor = Math.exp(e.deltaY * 0.0015);
    const m = this.model;
    const widest = this.maxWidth(); // zoom-out stops at the run's extent plus a margin
    if (m.get('follow')) { // zoom while following: a narrower or wider window ending at now
      const win = Math.min(Math.max((this.v1 - this.v0) * factor, 1e-6), widest);
      m.set('window', win); m.save_changes(); this.invalidate(); return;
    }
    const at = this.t(Math.max(this.g.gutter, Math.min(px, this.plotX1())));
    this.v0 = at - (at - this.v0) * factor;
    this.v1 = at + (this.v1 - at) * factor;
    if (this.v1 - this.v0 < 1e-6) { const c = (this.v0 + this.v1) / 2; this.v0 = c - 5e-7; this.v1 = c + 5e-7; }
    if (this.v1 - this.v0 >= widest) { // all of it: the extent, centred in the margin
      const [a, b] = this.extent(), pad = (widest - (b - a)) / 2;
      this.v0 = a - pad; this.v1 = b + pad;
    }
    this.sendView(false);
    this.invalidate();
    void py;
  }

  onDown(e) {
    const [px, py] = this.pos(e);
    this.canvas.setPointerCapture(e.pointerId);
    const onBar = px >= this.width - SCROLL_W && this.thumb;
    this.drag = { px, py, v0: this.v0, v1: this.v1, scroll: this.scroll, moved: false, bar: onBar };
    this.canvas.classList.add('tsl-dragging');
  }

  onMove(e) {
    const [px, py] = this.pos(e);
    const d = this.drag;
    if (!d) { this.setHit(this.hitAt(px, py), px, py); return; }
    const dx = px - d.px, dy = py - d.py;
    if (Math.abs(dx) + Math.abs(dy) > 3) d.moved = true;
    if (!d.moved) return;
    this.setHit(null);
    if (d.bar) {
      const lanes = this.laneList(), shown = this.lanesOnScreen();
      const per = (lanes.count - shown) / Math.max(1, this.thumb.h - this.thumb.th);
      this.scroll = Math.round(d.scroll + dy * per);
      this.stick = false;
    } else {
      const dt = dx / (this.plotX1() - this.g.gutter) * (d.v1 - d.v0);
      this.v0 = d.v0 - dt; this.v1 = d.v1 - dt;
      const scrolled = Math.round(d.scroll - dy / this.g.lane);
      if (scrolled !== this.scroll) { this.scroll = scrolled; this.stick = false; }
      if (Math.abs(dx) > 3) this.setFollow(false);
      this.sendView(false);
    }
    this.invalidate();
  }

  onUp(e) {
    const d = this.drag;
    this.drag = null;
    this.canvas.classList.remove('tsl-dragging');
    if (!d) return;
    if (d.moved) { this.sendView(true); return; }
    const [px, py] = this.pos(e);
    const hit = this.hitAt(px, py);
    const task = hit && hit.run ? hit.run.task : -1;
    const m = this.model;
    m.set('selected', task >= 0 && task !== m.get('selected') ? task : -1);
    m.save_changes();
  }

  hitAt(px, py) {
    if (!this.hits) return null;
    let best = null, bestD = Infinity;
    for (const h of this.hits) {
      if (h.x2 !== undefined) { // a bar or a waiting line
        if (px >= h.x - 2 && px <= h.x2 + 2 && Math.abs(py - h.y) <= h.r + 1) {
          const dd = h.bar ? 4 : 6;
          if (dd < bestD) { best = h; bestD = dd; }
        }
        continue;
      }
      const dd = Math.hypot(px - h.x, py - h.y);
      if (dd <= h.r + 2 && dd < bestD + 3) { best = h; bestD = dd - 3; }
    }
    return best;
  }

  setHit(hit, px, py) {
    this.hit = hit;
    const tip = this.tip;
    if (!hit || hit.seq === undefined || hit.seq < 0) { tip.style.display = 'none'; this.el.dataset.hover = ''; return; }
    const s = this.store, r = hit.run;
    const name = r && r.label !== undefined ? s.labels[r.label] : '';
    const local = r && r.task >= 0 ? `${name ? name + ' · ' : ''}task #${r.task}` : 'a rejected request';
    const answer = s.hover.get(hit.seq);
    tip.innerHTML = '';
    const head = document.createElement('div'); head.className = 'tsl-tl-tip-text';
    head.textContent = answer ? answer.text : `row ${hit.seq}: …`;
    const det = document.createElement('div'); det.className = 'tsl-tl-tip-details';
    det.textContent = answer && answer.details ? answer.details : local;
    tip.appendChild(head); tip.appendChild(det);
    tip.style.display = 'block';
    const left = Math.min(px + 14, this.width - (this.g.text > 12 ? 400 : 300));
    tip.style.left = Math.max(0, left) + 'px';
    tip.style.top = (py + 40) + 'px';
    this.el.dataset.hover = String(hit.seq);
    if (!answer) {
      const run = r && r.rows ? r.rows : [];
      this.model.send({ type: 'hover', seq: hit.seq, run, token: s.token });
    }
  }

  hoverAnswered(seq) { if (this.hit && this.hit.seq === seq) { const h = this.hit; this.setHit(h, parseFloat(this.tip.style.left) - 14, parseFloat(this.tip.style.top) - 40); } }

  buildLegend() {
    const m = this.model, pal = m.get('palette'), marks = m.get('marks'), names = m.get('case_names');
    const lg = this.legend;
    lg.innerHTML = '';
    const z = this.g.glyph;
    const item = (draw, text) => {
      const span = document.createElement('span');
      const c = document.createElement('canvas');
      const dpr = window.devicePixelRatio || 1;
      c.width = 22 * z * dpr; c.height = 18 * z * dpr; c.style.width = 22 * z + 'px'; c.style.height = 18 * z + 'px';
      const g = c.getContext('2d'); g.scale(dpr * z, dpr * z); draw(g);
      span.appendChild(c); span.appendChild(document.createTextNode(text)); lg.appendChild(span);
    };
    for (const c of Object.keys(names)) {
      item(g => { g.fillStyle = pal.case[c]; g.fillRect(2, 4, 18, 10); }, `${c} ${names[c]}`);
    }
    item(g => { g.strokeStyle = pal.neutral.wait; g.lineWidth = 1.5; g.beginPath(); g.moveTo(1, 9); g.lineTo(21, 9); g.stroke(); }, 'waiting');
    for (const key of ['scheduled', 'due', 'starts', 'event_set', 'cancels', 'errors', 'drops', 'duplicates', 'rejected', 'skipped']) {
      const mk = marks[key];
      if (!mk) continue;
      item(g => glyph(g, mk, 11, 9, pal.neutral.unknown), mk.label);
    }
  }
}

// The theme's colours (theme.css variables, as computed where the view sits); light if unset.
const LIGHT = { fg: '#1f1f1f', bg: '#ffffff', muted: '#595959', border: '#8c8c8c', grid: '#e0e0e0',
                panelBg: '#f2f2f2', headBg: '#fff4d6', headFg: '#1f1f1f' };
function readTheme(el) {
  const css = getComputedStyle(el);
  const get = (name, fallback) => (css.getPropertyValue(name) || '').trim() || fallback;
  return {
    fg: get('--tsl-fg', LIGHT.fg), bg: get('--tsl-bg', LIGHT.bg), muted: get('--tsl-muted', LIGHT.muted),
    border: get('--tsl-border', LIGHT.border), grid: get('--tsl-grid', LIGHT.grid),
    panelBg: get('--tsl-panel-bg', LIGHT.panelBg), headBg: get('--tsl-head-bg', LIGHT.headBg),
    headFg: get('--tsl-head-fg', LIGHT.headFg),
  };
}

function button(bar, text, cls, title) {
  const b = document.createElement('button');
  b.textContent = text; b.className = cls; b.title = title; b.type = 'button';
  bar.appendChild(b);
  return b;
}

function clip(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(s + '…').width > width) s = s.slice(0, -1);
  return s + '…';
}

function textOn(color) {
  const r = parseInt(color.slice(1, 3), 16) / 255, g = parseInt(color.slice(3, 5), 16) / 255, b = parseInt(color.slice(5, 7), 16) / 255;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.4 ? 'black' : 'white';
}

// -- anywidget entry points ------------------------------------------------------------------

function initialize({ model }) {
  const store = new Store(model);
  store.noLane = model.get('no_lane');
  const uid = model.get('uid');
  STORES.set(uid, store);
  const onMsg = (msg, buffers) => {
    if (!msg || (msg.to && msg.to !== store.token)) return; // a resync meant for another page
    if (msg.type === 'reset') {
      store.reset(msg.first, msg.labels || [], msg.lanes || []);
      store.synced = true;
      store.changed();
    } else if (msg.type === 'rows') {
      if (!store.synced) {
        // Our reset is on its way and holds these rows; but a kernel running later cells (Run
        // All) answers a hello only between them: take the pushed rows meanwhile, if they follow
        // on from what this page holds, its tables included.
        const empty = store.n === 0 && store.labels.length === 0 && store.laneNames.length === 0;
        const follows = msg.first === store.next || (empty && msg.labels_at === 0 && msg.lanes_at === 0);
        if (!follows || msg.labels_at !== store.labels.length || msg.lanes_at !== store.laneNames.length) return;
        if (empty) store.first = msg.first;
        store.append(msg, buffers[0]);
        store.changed();
        return;
      }
      if (msg.first > store.next) { askAgain(store); return; } // a message was lost
      store.append(msg, buffers[0]);
      store.changed();
    } else if (msg.type === 'hover') {
      store.hover.set(msg.seq, msg);
      for (const v of store.views) v.hoverAnswered(msg.seq);
    }
  };
  const onSeq = () => { // the kernel says how many rows the page should hold; a lost last batch
    clearTimeout(store.seqTimer);
    store.seqTimer = setTimeout(() => { if (store.synced && store.next < model.get('seq')) askAgain(store); }, 1500);
  };
  model.on('msg:custom', onMsg);
  model.on('change:seq', onSeq);
  model.send({ type: 'hello', token: store.token });
  return () => {
    model.off('msg:custom', onMsg); model.off('change:seq', onSeq);
    if (STORES.get(uid) === store) STORES.delete(uid);
  };
}

function askAgain(store) {
  const now = performance.now();
  if (now - store.needAsked < 2000) return;
  store.needAsked = now;
  store.synced = false;
  store.model.send({ type: 'need', from: store.next, token: store.token });
}

function render({ model, el }) {
  let store = STORES.get(model.get('uid'));
  if (!store) { initialize({ model }); store = STORES.get(model.get('uid')); }
  const view = new View(model, el, store);
  store.views.add(view);
  el.__tsl = view; // for tests and benchmarks: frame times, the visible range
  return () => view.destroy();
}

export default { initialize, render };
export { Store, View, kindCodes };
