/* Tiny inline-SVG charts for the admin dashboard (no dependencies).
 *   Charts.lines(container, {title, desc, labels: [..], series: [{name, color, values, dash?}], bars?: {name, color, values}})
 *   Charts.stacked(container, {title, desc, segments: [{label, value, color}]})
 *   Charts.hbars(container, {title, desc, items: [{label, value, color}]})
 * Every chart is an <svg role="img"> with <title> and <desc>; callers add a data table too. */
(function () {
  'use strict';
  const NS = 'http://www.w3.org/2000/svg';
  let uid = 0;

  function s(tag, attrs, text) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
  }
  function frame(container, width, height, title, desc, kind) {
    uid += 1;
    const tid = `chart-t-${uid}`;
    const did = `chart-d-${uid}`;
    const svg = s('svg', {
      viewBox: `0 0 ${width} ${height}`, width: '100%', role: 'img', 'aria-labelledby': `${tid} ${did}`,
      class: 'chart', 'data-chart': kind, preserveAspectRatio: 'xMidYMid meet',
    });
    svg.append(s('title', { id: tid }, title), s('desc', { id: did }, desc || title));
    container.replaceChildren(svg);
    return svg;
  }
  function widthOf(container, fallback) {
    // Draw at the container's pixel width so text stays at its real size; hidden → fallback.
    const w = Math.round(container.clientWidth || 0);
    return w >= 240 ? w : fallback;
  }
  function niceScale(v) {
    // Counts: an integer step from 1-2-5 x 10^k with at most 5 intervals.
    const pow = Math.pow(10, Math.max(0, Math.floor(Math.log10(Math.max(v, 1)))));
    for (const m of [0.1, 0.2, 0.5, 1, 2, 5, 10]) {
      const step = Math.max(1, m * pow);
      const n = Math.max(1, Math.ceil(v / step));
      if (n <= 5) return { max: n * step, step, n };
    }
    return { max: v, step: v, n: 1 };
  }
  function empty(svg, width, height, msg) {
    svg.append(s('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'chart-empty' }, msg || 'No data in this range'));
  }

  function lines(container, o) {
    const W = widthOf(container, 640), H = 260, L = 40, R = 24, T = 14, B = 34;
    const svg = frame(container, W, H, o.title, o.desc, 'lines');
    const n = o.labels.length;
    const all = o.series.flatMap((x) => x.values).concat(o.bars ? o.bars.values : []);
    const scale = niceScale(Math.max(0, ...all));
    const maxV = scale.max;
    const x = (i) => (n <= 1 ? L + (W - L - R) / 2 : L + (i * (W - L - R)) / (n - 1));
    const y = (v) => T + (H - T - B) * (1 - v / maxV);
    const grid = s('g', { class: 'grid' });
    for (let k = 0; k <= scale.n; k++) {
      const v = scale.step * k;
      grid.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      grid.append(s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, Number.isInteger(v) ? v : v.toFixed(1)));
    }
    svg.append(grid);
    if (!n || all.every((v) => !v)) {
      empty(svg, W, H);
    }
    const step = Math.max(1, Math.ceil(n / Math.max(2, Math.floor((W - L - R) / 70))));
    const xAxis = s('g', { class: 'x-axis' });
    o.labels.forEach((lab, i) => {
      if ((n - 1 - i) % step) return; // anchored on the last day, evenly spaced
      xAxis.append(s('text', { x: x(i), y: H - B + 18, 'text-anchor': 'middle', class: 'tick' }, lab));
    });
    svg.append(xAxis);
    if (o.bars) {
      const bw = Math.max(2, Math.min(22, ((W - L - R) / Math.max(n, 1)) * 0.6));
      const g = s('g', { class: 'bars', 'data-series': o.bars.name });
      o.bars.values.forEach((v, i) => {
        if (!v) return;
        const r = s('rect', { x: x(i) - bw / 2, y: y(v), width: bw, height: Math.max(0, H - B - y(v)), fill: o.bars.color, rx: 2 });
        r.append(s('title', {}, `${o.labels[i]}: ${v} ${o.bars.name}`));
        g.append(r);
      });
      svg.append(g);
    }
    for (const ser of o.series) {
      const g = s('g', { class: 'series', 'data-series': ser.name });
      const pts = ser.values.map((v, i) => `${x(i).toFixed(1)},${y(v || 0).toFixed(1)}`);
      if (pts.length > 1) {
        g.append(s('polyline', { points: pts.join(' '), fill: 'none', stroke: ser.color, 'stroke-width': 2.5, 'stroke-linejoin': 'round', 'stroke-dasharray': ser.dash || null }));
      }
      ser.values.forEach((v, i) => {
        const c = s('circle', { cx: x(i), cy: y(v || 0), r: n > 45 ? 2 : 3.5, fill: '#fff', stroke: ser.color, 'stroke-width': 2 });
        c.append(s('title', {}, `${o.labels[i]}: ${v || 0} ${ser.name}`));
        g.append(c);
      });
      svg.append(g);
    }
    return svg;
  }

  function stacked(container, o) {
    const W = widthOf(container, 640), H = 96, L = 0, R = 0, T = 10, BH = 40;
    const svg = frame(container, W, H, o.title, o.desc, 'stacked');
    const total = o.segments.reduce((a, b) => a + (b.value || 0), 0);
    svg.append(s('rect', { x: L, y: T, width: W - L - R, height: BH, rx: 8, fill: '#eef1f5' }));
    if (!total) {
      empty(svg, W, T + BH / 2 + 30, 'No answered turns in this range');
      return svg;
    }
    let cx = L;
    const g = s('g', { class: 'segments' });
    for (const seg of o.segments) {
      const w = ((seg.value || 0) / total) * (W - L - R);
      if (w <= 0) continue;
      const pct = Math.round(((seg.value || 0) / total) * 100);
      const r = s('rect', { x: cx, y: T, width: w, height: BH, fill: seg.color, 'data-segment': seg.label });
      r.append(s('title', {}, `${seg.label}: ${seg.value} (${pct}%)`));
      g.append(r);
      if (w > 56) g.append(s('text', { x: cx + w / 2, y: T + BH / 2 + 5, 'text-anchor': 'middle', class: 'seg-label' }, `${seg.label} ${pct}%`));
      cx += w;
    }
    // Round the outer corners with a clip so thin edge segments stay visible.
    const clipId = `clip-${uid}`;
    const defs = s('defs');
    const cp = s('clipPath', { id: clipId });
    cp.append(s('rect', { x: L, y: T, width: W - L - R, height: BH, rx: 8 }));
    defs.append(cp);
    svg.append(defs);
    g.setAttribute('clip-path', `url(#${clipId})`);
    svg.append(g);
    svg.append(s('text', { x: W / 2, y: T + BH + 30, 'text-anchor': 'middle', class: 'tick' }, `${total} answered turns`));
    return svg;
  }

  function hbars(container, o) {
    const rowH = 34, L = 150, R = 48, T = 6;
    const W = widthOf(container, 640), H = T * 2 + rowH * Math.max(1, o.items.length);
    const svg = frame(container, W, H, o.title, o.desc, 'hbars');
    const maxV = Math.max(1, ...o.items.map((i) => i.value || 0));
    const g = s('g', { class: 'rows' });
    o.items.forEach((it, k) => {
      const y0 = T + k * rowH;
      const w = ((it.value || 0) / maxV) * (W - L - R);
      g.append(s('text', { x: L - 10, y: y0 + rowH / 2 + 5, 'text-anchor': 'end', class: 'label' }, it.label));
      g.append(s('rect', { x: L, y: y0 + 7, width: W - L - R, height: rowH - 14, rx: 4, fill: '#f2f4f7' }));
      const bar = s('rect', { x: L, y: y0 + 7, width: Math.max(it.value ? 3 : 0, w), height: rowH - 14, rx: 4, fill: it.color || '#0b5fff', 'data-item': it.label });
      bar.append(s('title', {}, `${it.label}: ${it.value || 0}`));
      g.append(bar);
      g.append(s('text', { x: L + Math.max(3, w) + 8, y: y0 + rowH / 2 + 5, class: 'value' }, String(it.value || 0)));
    });
    svg.append(g);
    return svg;
  }

  window.Charts = { lines, stacked, hbars };
})();
