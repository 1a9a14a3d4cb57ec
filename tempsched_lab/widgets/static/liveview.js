// tempsched_lab LiveView: a scheduler's moment (queue, newest log rows, case counts) drawn from
// one JSON trait, `state`. No build step, no CDN. Colours: the theme's CSS variables, with light
// fallbacks (--tsl-fg, --tsl-bg, --tsl-muted, --tsl-border, --tsl-accent, --tsl-accent-fg,
// --tsl-panel-bg, --tsl-head-bg, --tsl-head-fg, --tsl-ok, --tsl-late, --tsl-fail).

const CSS = `
.tsl-live { font-family: var(--tsl-font, sans-serif); font-size: 13px; color: var(--tsl-fg, #222);
  background: var(--tsl-bg, #fff); border: 1px solid var(--tsl-border, #ccc); border-radius: 4px;
  padding: 8px; display: flex; flex-direction: column; gap: 8px; max-width: 100%; box-sizing: border-box; }
.tsl-live.tsl-projector { font-size: 17px; }
.tsl-live h3 { margin: 0; font-size: 1.15em; }
.tsl-live .tsl-live-about { color: var(--tsl-muted, #555); }
.tsl-live .tsl-live-row { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.tsl-live section { background: var(--tsl-panel-bg, #fafafa); border: 1px solid var(--tsl-border, #ccc);
  border-radius: 4px; padding: 6px; flex: 1 1 340px; min-width: 0; overflow-x: auto; }
.tsl-live section > b { display: block; margin-bottom: 4px; }
.tsl-live table { border-collapse: collapse; font-family: monospace; font-size: 1em; }
.tsl-live th, .tsl-live td { padding: 1px 6px; border-bottom: 1px solid var(--tsl-border, #ddd);
  text-align: left; vertical-align: top; }
.tsl-live tr.tsl-head td { background: var(--tsl-head-bg, #F7DDA6); color: var(--tsl-head-fg, #222); font-weight: bold; }
.tsl-live .tsl-late { color: var(--tsl-late, #9a4d00); }
.tsl-live .tsl-ok { color: var(--tsl-ok, #1d6b2f); }
.tsl-live .tsl-fail { color: var(--tsl-fail, #b00020); }
.tsl-live .tsl-chip { display: inline-block; margin: 1px 3px; padding: 0 6px; border-radius: 8px;
  background: var(--tsl-accent, #2a5db0); color: var(--tsl-accent-fg, #fff); }
.tsl-live .tsl-live-missing { color: var(--tsl-muted, #555); font-style: italic; }
`;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function table(headers, rows) {
  const t = el('table');
  t.append(el('tr', {}, ...headers.map((h) => el('th', {}, h))));
  for (const r of rows) t.append(r);
  return t;
}

function draw(root, state, scale) {
  root.className = 'tsl-live' + (scale === 'projector' ? ' tsl-projector' : '');
  root.replaceChildren();
  if (!state || state.seq === undefined) {
    root.append(el('div', { class: 'tsl-live-about' }, 'waiting for the first frame from the kernel…'));
    return;
  }
  if (state.title) root.append(el('h3', {}, state.title));
  const about = `now ${state.now} · ${state.pending} pending · ${state.seq} log rows` +
    (state.closed ? ' · scheduler shut down' : '');
  root.append(el('div', { class: 'tsl-live-about tsl-stamp', 'data-seq': String(state.seq) }, about));
  const row = el('div', { class: 'tsl-live-row' });
  // the queue
  const queue = el('section', { class: 'tsl-live-queue' }, el('b', {}, 'Queue'));
  if (!state.queue.length) queue.append(el('i', {}, 'the queue is empty'));
  else {
    queue.append(table([`due ${state.unit}`, 'countdown', 'ID', 'label', 'period'], state.queue.map((q) => {
      const cd = el('td', { class: q.countdown.startsWith('late') ? 'tsl-late' : '' }, q.countdown);
      return el('tr', { class: q.head ? 'tsl-head' : 'tsl-point' },
        el('td', {}, q.due), cd, el('td', {}, q.id), el('td', {}, q.label), el('td', {}, q.period));
    })));
    if (state.more > 0) queue.append(el('div', {}, el('i', {}, `… and ${state.more} more task(s)`)));
  }
  if (state.running.length) {
    queue.append(el('div', {}, 'running: ', ...state.running.map((r) => el('span', { class: 'tsl-chip' }, r))));
  }
  row.append(queue);
  // the case counts
  const counts = el('section', { class: 'tsl-live-counts' }, el('b', {}, 'Decisions by case'));
  counts.append(table(Object.keys(state.counts), [el('tr', {}, ...Object.values(state.counts).map((n) => el('td', {}, n)))]));
  row.append(counts);
  root.append(row);
  // the log
  const log = el('section', { class: 'tsl-live-log' }, el('b', {}, 'Newest log rows'));
  if (!state.logging) log.append(el('i', {}, 'this scheduler keeps no log'));
  else if (!state.log.length) log.append(el('i', {}, 'no rows yet'));
  else {
    log.append(table(['seq', state.unit, 'kind', 'what happened'], state.log.map((r) => {
      const cls = r.kind === 'error' ? 'tsl-fail' : (r.kind === 'finish' ? 'tsl-ok' : '');
      return el('tr', { class: cls }, el('td', {}, r.seq), el('td', {}, r.t), el('td', {}, r.kind), el('td', {}, r.text));
    })));
  }
  root.append(log);
  if (state.missing && state.missing.length) {
    root.append(el('div', { class: 'tsl-live-missing' },
      `Not shown in this host (they need Jupyter widgets): ${state.missing.join(', ')}. ` +
      'Open the notebook in JupyterLab, Notebook 7 or Voila for them.'));
  }
}

function render({ model, el: host }) {
  // the style sheet inside the view: marimo draws each anywidget in a shadow root of its own
  const style = document.createElement('style');
  style.textContent = CSS;
  host.append(style);
  const root = document.createElement('div');
  host.append(root);
  const redraw = () => draw(root, model.get('state'), model.get('type_scale'));
  model.on('change:state', redraw);
  model.on('change:type_scale', redraw);
  redraw();
  return () => { model.off('change:state', redraw); model.off('change:type_scale', redraw); };
}

export default { render };
