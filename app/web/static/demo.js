/* Demo console for /demo: a customer switcher and a per-turn inspection panel.
 * Talks to the widget only through its public API (window.Concierge) and its events. */
(function () {
  'use strict';
  const $ = (sel) => document.querySelector(sel);
  const select = $('#customer');
  const statusEl = $('#session-status');
  const errEl = $('#customers-error');
  const turnsEl = $('#turns');
  const noTurns = $('#no-turns');
  const STORE_KEY = 'concierge-demo:customer';
  const TOKEN_MAX_AGE_MS = 20 * 60 * 1000;

  let customers = [];
  let fetchedAt = 0;
  let turnNo = 0;
  let pendingCard = null;

  function h(tag, attrs) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (let i = 2; i < arguments.length; i++) {
      const kid = arguments[i];
      if (kid === null || kid === undefined || kid === false) continue;
      (Array.isArray(kid) ? kid : [kid]).forEach((k) => k !== null && k !== undefined && el.append(k.nodeType ? k : String(k)));
    }
    return el;
  }
  const fmt = (x, d) => (typeof x === 'number' && isFinite(x) ? x.toFixed(d === undefined ? 3 : d) : '—');
  const KNOWN = ['free', 'pro', 'enterprise'];
  const planLabel = (p) => (KNOWN.includes(p) ? p : `${p || 'none'} (unknown → free rung)`);

  // ------------------------------------------------------------ customers and identity
  async function fetchCustomers() {
    const res = await fetch('/v1/demo/customers', { headers: { Accept: 'application/json' }, cache: 'no-store' });
    if (!res.ok) {
      let detail = '';
      try {
        detail = (await res.json()).detail || '';
      } catch (_) {
        /* not JSON */
      }
      throw new Error(`Couldn't load demo customers (${res.status}${detail ? ': ' + detail : ''}).`);
    }
    customers = (await res.json()).customers || [];
    fetchedAt = Date.now();
    return customers;
  }
  async function freshToken(id) {
    // Identity tokens are short-lived: re-mint (as a host backend would) when ours is old.
    if (Date.now() - fetchedAt > TOKEN_MAX_AGE_MS) await fetchCustomers();
    const c = customers.find((x) => x.id === id);
    return c ? c.identityToken : null;
  }
  function fillSelect() {
    const groups = {};
    for (const c of customers) {
      const key = KNOWN.includes(c.plan) ? c.plan : 'unknown plan';
      (groups[key] = groups[key] || []).push(c);
    }
    select.replaceChildren(h('option', { value: '' }, 'Anonymous visitor'));
    for (const key of ['free', 'pro', 'enterprise', 'unknown plan']) {
      if (!groups[key]) continue;
      const og = h('optgroup', { label: key === 'unknown plan' ? 'Unknown plan' : key[0].toUpperCase() + key.slice(1) });
      for (const c of groups[key]) {
        og.append(h('option', { value: c.id, 'data-plan': c.plan }, `${c.name} — ${c.plan}${c.locale && c.locale !== 'en' ? ' · ' + c.locale : ''}`));
      }
      select.append(og);
    }
  }
  function presetFor(kind) {
    if (kind === 'anon') return '';
    const english = customers.filter((c) => !c.locale || c.locale === 'en');
    const pool = english.length ? english : customers;
    const match = (c) => (kind === 'unknown' ? !KNOWN.includes(c.plan) : c.plan === kind);
    const c = pool.find(match) || customers.find(match);
    return c ? c.id : null;
  }
  function markPresets() {
    const id = select.value;
    const c = customers.find((x) => x.id === id);
    const kind = !id ? 'anon' : c && KNOWN.includes(c.plan) ? c.plan : 'unknown';
    document.querySelectorAll('[data-preset]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.preset === kind && presetFor(kind) === id)));
  }
  async function applyCustomer(id) {
    select.value = id || '';
    markPresets();
    try {
      sessionStorage.setItem(STORE_KEY, id || '');
    } catch (_) {
      /* ignore */
    }
    const c = customers.find((x) => x.id === id);
    statusEl.textContent = c ? `Signing in as ${c.name} (${planLabel(c.plan)})…` : 'Anonymous visitor.';
    if (!window.Concierge) return;
    await window.Concierge.identify(id ? () => freshToken(id) : null);
    describeSession();
  }
  function describeSession() {
    const s = window.Concierge && window.Concierge.state;
    if (!s) return;
    if (s.customer) {
      const c = customers.find((x) => x.id === s.customer.id);
      statusEl.textContent = `Session: ${s.customer.name} · plan ${planLabel(s.customer.plan)}${c && c.locale ? ' · locale ' + c.locale : ''}.`;
    } else if (select.value) {
      statusEl.textContent = 'Signed in; the session starts with the first message.';
    } else statusEl.textContent = 'Session: anonymous visitor (free rung of the entitlement ladder).';
  }

  // ------------------------------------------------------------ inspection cards
  function who(customer) {
    if (!customer) return 'anonymous';
    return `${customer.name} (${planLabel(customer.plan)})`;
  }
  function band(conf) {
    const c = ['strong', 'weak', 'none'].includes(conf) ? conf : 'none';
    return h('span', { class: `band band-${c}`, 'data-field': 'confidence' }, conf || 'n/a');
  }
  function passagesTable(passages) {
    const max = Math.max(0.0001, ...passages.map((p) => (typeof p.rerankScore === 'number' ? p.rerankScore : 0)));
    const body = h('tbody');
    passages.forEach((p, i) => {
      body.append(
        h(
          'tr',
          null,
          h('td', { class: 'num' }, String(i + 1)),
          h('td', null, h('span', { class: 'kind' + (p.kind === 'ticket' ? ' ticket' : '') }, p.kind || '?')),
          h('td', { class: 'crumb' }, p.breadcrumb || p.title || p.id || ''),
          h('td', { class: 'num' }, fmt(p.rrfScore, 4)),
          h(
            'td',
            { class: 'num' },
            fmt(p.rerankScore, 3),
            typeof p.rerankScore === 'number' ? scoreBar(p.rerankScore / max) : null
          )
        )
      );
    });
    return h(
      'table',
      { 'data-field': 'passages' },
      h('caption', null, `Passages (${passages.length})`),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col' }, 'Breadcrumb'), h('th', { scope: 'col' }, 'RRF'), h('th', { scope: 'col' }, 'Rerank'))),
      body
    );
  }
  function scoreBar(frac) {
    const s = h('span', { class: 'scorebar', 'aria-hidden': 'true' });
    s.style.width = Math.round(Math.max(0.02, Math.min(1, frac)) * 36) + 'px';
    return s;
  }
  function latency(lat) {
    const stages = ['condense', 'retrieve', 'rerank', 'generate', 'total'];
    const total = Math.max(1, lat.total || 0, ...stages.map((k) => lat[k] || 0));
    const grid = h('div', { class: 'lat', 'data-field': 'latency', role: 'table', 'aria-label': 'Latency per stage' });
    for (const k of stages) {
      if (typeof lat[k] !== 'number') continue;
      const fill = h('span');
      fill.style.width = Math.max(1, (lat[k] / total) * 100) + '%';
      const row = h('div', { role: 'row', style: null });
      row.style.display = 'contents';
      row.append(h('span', { role: 'rowheader' }, k), h('span', { class: 'bar', role: 'cell', 'aria-hidden': 'true' }, fill), h('span', { class: 'ms', role: 'cell' }, `${Math.round(lat[k])} ms`));
      grid.append(row);
    }
    return grid;
  }
  function fillCard(card, data) {
    const { meta, message, question, customer, earlier } = data;
    const m = Object.assign({}, meta || {}, (message && message.meta) || {});
    const kids = [];
    kids.push(
      h(
        'header',
        null,
        h('h4', null, `Turn ${card.dataset.no}${earlier ? ' (earlier)' : ''} · as ${who(customer)}`),
        h('time', { datetime: new Date().toISOString() }, new Date((message && message.createdAt) || Date.now()).toLocaleTimeString())
      )
    );
    kids.push(h('p', { class: 'q' }, `“${question || '…'}”`));
    const dl = h('dl', { class: 'kv' });
    const row = (k, v) => dl.append(h('dt', null, k), h('dd', null, v));
    row('Condensed', h('span', { 'data-field': 'condensed' }, m.condensedQuestion || '—'));
    row('Intent', h('span', { class: 'chip', 'data-field': 'intent' }, m.intent || '—'));
    row('Sentiment', h('span', { 'data-field': 'sentiment' }, m.sentiment || '—'));
    if (m.language) row('Language', h('span', { 'data-field': 'language' }, m.retrievalLocale && m.retrievalLocale !== m.language ? `${m.language} (searched ${m.retrievalLocale})` : m.language));
    if (m.via === 'button') row('Via', h('span', { 'data-field': 'via' }, 'talk-to-a-person button'));
    row('Confidence', [band(m.confidence), typeof m.topRerankScore === 'number' ? `  top rerank ${fmt(m.topRerankScore)}` : '']);
    if (m.escalated) {
      row('Escalated', h('span', { class: 'esc', 'data-field': 'escalation' }, `${m.escalationReason || 'yes'}${m.caseRef ? ' · ' + m.caseRef : ''}`));
    } else row('Escalated', h('span', { 'data-field': 'escalation' }, 'no'));
    // why, from the same trace: the signal that decided, and what the confidence rests on
    if (m.escalated && m.escalationExplanation) row('Why', h('span', { 'data-field': 'why' }, m.escalationExplanation));
    if (m.confidenceReason) row('Confidence from', h('span', { 'data-field': 'confidence-reason' }, m.confidenceReason));
    if (m.model) row('Model', m.model);
    if (Array.isArray(m.citations) && m.citations.length) row('Cited', m.citations.map((c) => `[${c.n}] ${c.title}`).join(' · '));
    kids.push(dl);
    const passages = Array.isArray(m.passages) ? m.passages : [];
    if (passages.length) kids.push(passagesTable(passages));
    else kids.push(h('p', { class: 'subh' }, 'Passages: none (retrieval skipped or nothing matched)'));
    const tools = Array.isArray(m.tools) ? m.tools : [];
    kids.push(h('p', { class: 'subh' }, 'Tools'));
    kids.push(
      tools.length
        ? h(
            'ul',
            { class: 'tools', 'data-field': 'tools' },
            tools.map((t) => h('li', null, h('strong', null, t.tool), t.ref ? ` ${t.ref}` : '', ' ', h('span', { class: t.ok ? 'ok' : 'bad' }, t.ok ? 'ok' : 'failed'), ' · ', t.found ? 'found' : 'not found'))
          )
        : h('p', { 'data-field': 'tools' }, message ? 'none called' : '…')
    );
    if (m.latencyMs && typeof m.latencyMs === 'object') {
      kids.push(h('p', { class: 'subh' }, 'Latency'));
      kids.push(latency(m.latencyMs));
    } else if (!message) kids.push(h('p', { class: 'subh' }, 'Answering…'));
    card.replaceChildren(...kids);
    card.classList.toggle('pending', !message);
    card.setAttribute('data-intent', m.intent || '');
    card.setAttribute('data-confidence', m.confidence || '');
  }
  function newCard(earlier) {
    turnNo += 1;
    const card = h('article', { class: 'turn', 'data-no': String(turnNo), 'aria-label': `Turn ${turnNo}` });
    if (earlier) turnsEl.append(card);
    else turnsEl.prepend(card);
    noTurns.hidden = true;
    return card;
  }

  document.addEventListener('concierge:inspect:meta', (e) => {
    pendingCard = pendingCard || newCard(false); // one card per turn, however many meta events
    fillCard(pendingCard, e.detail);
  });
  document.addEventListener('concierge:inspect:turn', (e) => {
    const card = pendingCard || newCard(false);
    pendingCard = null;
    fillCard(card, e.detail);
  });
  document.addEventListener('concierge:inspect:history', (e) => {
    // After a reload the widget restores the conversation; show its earlier turns too.
    if (turnsEl.children.length) return;
    const msgs = e.detail.messages || [];
    let lastUser = null;
    const cards = [];
    for (const m of msgs) {
      if (m.role === 'user') lastUser = m.content;
      if (m.role === 'assistant' && m.meta && m.meta.intent) cards.push({ message: m, question: lastUser });
    }
    cards.reverse().forEach((d) => fillCard(newCard(true), Object.assign({ customer: e.detail.customer, earlier: true }, d)));
  });
  document.addEventListener('concierge:identity', (e) => {
    // Keep the switcher in step when the page (or a test) calls Concierge.identify directly.
    const id = e.detail.customer ? e.detail.customer.id : '';
    if (select.value !== id && (!id || customers.some((c) => c.id === id))) {
      select.value = id;
      markPresets();
    }
    describeSession();
  });

  // ------------------------------------------------------------ controls
  select.addEventListener('change', () => applyCustomer(select.value));
  document.querySelectorAll('[data-preset]').forEach((b) =>
    b.addEventListener('click', () => {
      const id = presetFor(b.dataset.preset);
      if (id !== null) applyCustomer(id);
    })
  );
  document.querySelectorAll('[data-ask]').forEach((b) => b.addEventListener('click', () => window.Concierge && window.Concierge.send(b.dataset.ask)));
  $('#open-chat').addEventListener('click', () => window.Concierge && window.Concierge.open());
  $('#clear-turns').addEventListener('click', () => {
    turnsEl.replaceChildren();
    noTurns.hidden = false;
    turnNo = 0;
  });
  const compare = $('#compare');
  compare.addEventListener('click', async () => {
    const q = 'How long are audit logs kept?';
    compare.disabled = true;
    try {
      for (const plan of ['free', 'enterprise']) {
        const id = presetFor(plan);
        if (!id) continue;
        await applyCustomer(id);
        window.Concierge.newConversation();
        await window.Concierge.send(q);
      }
    } finally {
      compare.disabled = false;
    }
  });

  async function start() {
    try {
      await fetchCustomers();
      fillSelect();
    } catch (e) {
      errEl.textContent = e.message;
      errEl.hidden = false;
    }
    let saved = '';
    try {
      saved = sessionStorage.getItem(STORE_KEY) || '';
    } catch (_) {
      /* ignore */
    }
    if (saved && !customers.some((c) => c.id === saved)) saved = '';
    await applyCustomer(saved);
  }
  if (window.Concierge) start();
  else document.addEventListener('concierge:ready', start, { once: true });
})();
