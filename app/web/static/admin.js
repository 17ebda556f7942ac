/* Concierge support dashboard: metrics, gap clusters, drafts, resolution tickets and the escalation queue (admin bearer token). */
(function () {
  'use strict';
  const $ = (sel) => document.querySelector(sel);
  const TOKEN_KEY = 'concierge.adminToken';
  const AGENT_KEY = 'concierge.agentName';
  const COLORS = {
    conversations: '#d0d5dd', deflected: '#0b5fff', resolved: '#12b76a', escalated: '#f04438',
    strong: '#12b76a', weak: '#f79009', none: '#f04438',
    policy: '#7a5af8', explicit: '#0b5fff', frustration: '#f04438', failed_turns: '#f79009',
  };
  const REASON_LABELS = { policy: 'Policy intent', explicit: 'Asked for a person', frustration: 'Frustration', failed_turns: 'Failed turns' };

  let selectedCase = null;
  let lastMetrics = null;

  function h(tag, attrs) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (let i = 2; i < arguments.length; i++) add(el, arguments[i]);
    return el;
  }
  function add(el, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) kid.forEach((k) => add(el, k));
    else el.append(kid.nodeType ? kid : String(kid));
  }
  const pct = (r) => (typeof r === 'number' ? `${Math.round((r <= 1 ? r * 100 : r) * 10) / 10}%` : '—');
  const num = (x, d) => (typeof x === 'number' && isFinite(x) ? x.toFixed(d) : '—');
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
  function isoDay(d) {
    return d.toISOString().slice(0, 10);
  }
  function relative(iso) {
    const ms = Date.parse(iso) - Date.now();
    if (!isFinite(ms)) return '';
    const mins = Math.round(Math.abs(ms) / 60000);
    const text = mins < 60 ? `${mins} min` : mins < 48 * 60 ? `${Math.floor(mins / 60)} h ${mins % 60} min` : `${Math.round(mins / 1440)} days`;
    return ms >= 0 ? `in ${text}` : `${text} ago`;
  }

  // ------------------------------------------------------------ auth + fetch
  class HttpError extends Error {
    constructor(status, detail) {
      super(detail || `HTTP ${status}`);
      this.status = status;
    }
  }
  function token() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (_) {
      return null;
    }
  }
  async function api(path, opts) {
    opts = opts || {};
    const headers = { Accept: 'application/json', Authorization: 'Bearer ' + (token() || '') };
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, { method: opts.method || 'GET', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), cache: 'no-store' });
    } catch (_) {
      throw new HttpError(0, "Couldn't reach the server.");
    }
    if (res.status === 401) {
      signOut('That admin token was rejected (or it expired). Sign in again.');
      throw new HttpError(401, 'unauthorized');
    }
    let body = null;
    try {
      body = await res.json();
    } catch (_) {
      /* empty */
    }
    if (!res.ok) {
      const d = body && body.detail;
      throw new HttpError(res.status, typeof d === 'string' ? d : Array.isArray(d) ? d.map((x) => x.msg).join('; ') : `HTTP ${res.status}`);
    }
    return body;
  }
  function signOut(message) {
    try {
      sessionStorage.removeItem(TOKEN_KEY);
    } catch (_) {
      /* ignore */
    }
    $('#dashboard').hidden = true;
    $('#login').hidden = false;
    $('#signed-in').hidden = true;
    $('#sign-out').hidden = true;
    $('#login-error').textContent = message || '';
    $('#token').value = '';
    $('#token').focus();
  }
  async function signIn(t) {
    try {
      sessionStorage.setItem(TOKEN_KEY, t);
    } catch (_) {
      /* ignore */
    }
    $('#login').hidden = true;
    $('#dashboard').hidden = false;
    $('#signed-in').hidden = false;
    $('#sign-out').hidden = false;
    await Promise.all([loadOverview(), loadQueue(), loadReviews(), loadDrafts(), loadTickets()]);
  }

  // ------------------------------------------------------------ content review
  async function loadReviews() {
    const box = $('#reviews');
    let data;
    try {
      data = await api('/v1/admin/reviews');
    } catch (e) {
      if (e.status !== 401) box.replaceChildren(h('p', { class: 'error' }, e.message));
      return;
    }
    const articles = data.articles || [];
    if (!articles.length) {
      box.replaceChildren(h('p', { class: 'empty' }, 'Nothing is waiting for review.'));
      return;
    }
    box.replaceChildren(
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { id: 'review-table' },
          h('caption', null, `${articles.length} flagged article(s)`),
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Article'), h('th', { scope: 'col' }, 'Why'), h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'Decision'))),
          h(
            'tbody',
            null,
            articles.map((a) =>
              h(
                'tr',
                null,
                h('th', { scope: 'row' }, a.title, h('br'), h('code', null, a.slug)),
                h('td', null, (a.reviewFlags || []).join(', ')),
                h('td', null, a.status),
                h(
                  'td',
                  null,
                  a.status !== 'draft' ? h('button', { type: 'button', onclick: () => review(a.slug, 'approve') }, 'Approve') : null,
                  ' ',
                  a.status !== 'draft' ? h('button', { type: 'button', class: 'danger', onclick: () => review(a.slug, 'unpublish') }, 'Unpublish') : 'unpublished'
                )
              )
            )
          )
        )
      )
    );
  }
  async function review(slug, decision) {
    const reviewer = requireAgent();
    if (!reviewer) return;
    const err = $('#review-error');
    err.hidden = true;
    try {
      await api(`/v1/admin/articles/${encodeURIComponent(slug)}/review`, { method: 'POST', body: { reviewer, decision } });
    } catch (e) {
      err.textContent = e.message;
      err.hidden = false;
    }
    loadReviews();
  }

  // ------------------------------------------------------------ overview
  function rangeParams() {
    return `from=${encodeURIComponent($('#from').value)}&to=${encodeURIComponent($('#to').value)}`;
  }
  function setRange(days) {
    const to = new Date();
    const from = new Date(Date.now() - (days - 1) * 86400000);
    $('#from').value = isoDay(from);
    $('#to').value = isoDay(to);
  }
  function daysBetween(from, to) {
    const out = [];
    const end = Date.parse(to + 'T00:00:00Z');
    for (let t = Date.parse(from + 'T00:00:00Z'); t <= end && out.length < 400; t += 86400000) out.push(isoDay(new Date(t)));
    return out;
  }
  async function loadOverview() {
    const err = $('#range-error');
    err.hidden = true;
    if ($('#from').value > $('#to').value) {
      err.textContent = '“From” must not be after “To”.';
      err.hidden = false;
      return;
    }
    let metrics;
    try {
      metrics = await api(`/v1/admin/metrics?${rangeParams()}`);
    } catch (e) {
      if (e.status !== 401) {
        err.textContent = `Couldn't load metrics: ${e.message}`;
        err.hidden = false;
      }
      return;
    }
    lastMetrics = metrics;
    renderHeadline(metrics);
    renderCharts(metrics);
    renderLoopWeeks(metrics.knowledgeLoop);
    renderAssistWeeks(metrics.assist || []);
    loadClusters();
  }
  function renderCharts(metrics) {
    renderDaily(metrics);
    renderConfidence(metrics.confidenceMix || {});
    renderReasons(metrics.escalationReasons || {});
  }
  function stat(label, value, sub, cls) {
    return h('div', { class: 'stat' + (cls ? ' ' + cls : '') }, h('span', { class: 'label' }, label), h('span', { class: 'value' }, value), sub ? h('span', { class: 'sub' }, sub) : null);
  }
  function renderHeadline(m) {
    const t = m.totals || {};
    const spend = m.spend || {};
    const pair = h(
      'div',
      { class: 'stat pair', 'data-stat': 'rates' },
      h('div', null, h('span', { class: 'label' }, 'Deflection rate'), h('span', { class: 'value blue', 'data-rate': 'deflection' }, pct(t.deflectionRate)), h('span', { class: 'sub' }, `${t.deflected || 0} ended without a person`)),
      h('div', null, h('span', { class: 'label' }, 'Confirmed resolution'), h('span', { class: 'value green', 'data-rate': 'resolution' }, pct(t.resolutionRate)), h('span', { class: 'sub' }, `${t.resolved || 0} said “yes, solved”`))
    );
    $('#headline').replaceChildren(
      stat('Conversations', String(t.conversations || 0), `${m.from || $('#from').value} → ${m.to || $('#to').value}`),
      pair,
      stat('Unconfirmed deflections', String(t.unconfirmedDeflections || 0), 'no escalation, no “solved”'),
      stat('Escalated', String(t.escalated || 0), 'handed to a person'),
      stat('Median latency', typeof m.medianLatencyMs === 'number' ? `${Math.round(m.medianLatencyMs)} ms` : '—', 'per answered turn'),
      stat('LLM spend today', typeof spend.usd === 'number' ? `$${spend.usd.toFixed(2)}` : '—', spend.capReached ? 'daily cap reached — offline fallback' : typeof spend.capUsd === 'number' ? `cap $${spend.capUsd.toFixed(2)}` : '', spend.capReached ? 'warn' : ''),
      ...providerStats(m)
    );
  }
  function providerStats(m) {
    const out = [];
    const cache = (m.spend || {}).cache;
    if (cache && cache.calls) {
      const sub = cache.alert || `${cache.eligibleCalls} of ${cache.calls} calls cache-eligible; ${cache.creationInputTokens} tokens written`;
      out.push(stat('Prompt-cache reads today', `${cache.readInputTokens} tokens`, sub, cache.alert ? 'warn' : ''));
    }
    for (const [role, p] of Object.entries(m.providers || {})) {
      if (!p.ok) out.push(stat(`${role} provider`, 'configuration error', p.configError || '', 'warn'));
    }
    return out;
  }
  function legend(el, items) {
    el.replaceChildren(
      ...items.map((it) => {
        const sw = h('span', { class: 'sw', 'aria-hidden': 'true' });
        sw.style.background = it.color;
        return h('li', null, sw, it.label);
      })
    );
  }
  function renderDaily(m) {
    const from = m.from || $('#from').value;
    const to = m.to || $('#to').value;
    const byDate = Object.fromEntries((m.perDay || []).map((d) => [d.date, d]));
    const days = daysBetween(from, to);
    const pick = (k) => days.map((d) => (byDate[d] ? byDate[d][k] || 0 : 0));
    const t = m.totals || {};
    window.Charts.lines($('#chart-daily'), {
      title: 'Deflected and confirmed-resolved conversations per day',
      desc: `From ${from} to ${to}: ${t.deflected || 0} deflected (${pct(t.deflectionRate)}), ${t.resolved || 0} confirmed resolved (${pct(t.resolutionRate)}), of ${t.conversations || 0} conversations.`,
      labels: days.map((d) => d.slice(5)),
      bars: { name: 'conversations', color: COLORS.conversations, values: pick('conversations') },
      series: [
        { name: 'deflected', color: COLORS.deflected, values: pick('deflected') },
        { name: 'resolved (confirmed)', color: COLORS.resolved, values: pick('resolved') },
        { name: 'escalated', color: COLORS.escalated, values: pick('escalated'), dash: '5 4' },
      ],
    });
    legend($('#legend-daily'), [
      { label: 'Conversations (bars)', color: COLORS.conversations },
      { label: 'Deflected', color: COLORS.deflected },
      { label: 'Resolved (confirmed by customer)', color: COLORS.resolved },
      { label: 'Escalated (dashed)', color: COLORS.escalated },
    ]);
    const rows = (m.perDay || []).map((d) =>
      h('tr', null, h('th', { scope: 'row' }, d.date), h('td', { class: 'num' }, d.conversations), h('td', { class: 'num' }, d.deflected), h('td', { class: 'num' }, d.resolved), h('td', { class: 'num' }, d.escalated))
    );
    $('#table-daily').replaceChildren(
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          null,
          h('caption', null, 'Days with conversations'),
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Date'), h('th', { scope: 'col', class: 'num' }, 'Conversations'), h('th', { scope: 'col', class: 'num' }, 'Deflected'), h('th', { scope: 'col', class: 'num' }, 'Resolved'), h('th', { scope: 'col', class: 'num' }, 'Escalated'))),
          h('tbody', null, rows.length ? rows : h('tr', null, h('td', { colspan: '5', class: 'empty' }, 'No conversations in this range.')))
        )
      )
    );
  }
  function renderConfidence(mix) {
    const segs = ['strong', 'weak', 'none'].map((k) => ({ label: k, value: mix[k] || 0, color: COLORS[k] }));
    const total = segs.reduce((a, b) => a + b.value, 0);
    window.Charts.stacked($('#chart-confidence'), {
      title: 'Confidence band of answered turns',
      desc: segs.map((s) => `${s.label}: ${s.value}`).join(', ') + '.',
      segments: segs,
    });
    legend($('#legend-confidence'), segs.map((s) => ({ label: `${s.label} — ${s.value}${total ? ` (${Math.round((s.value / total) * 100)}%)` : ''}`, color: s.color })));
  }
  function renderReasons(reasons) {
    const keys = ['policy', 'explicit', 'frustration', 'failed_turns'].concat(Object.keys(reasons).filter((k) => !(k in REASON_LABELS)));
    const items = keys.map((k) => ({ label: REASON_LABELS[k] || k, value: reasons[k] || 0, color: COLORS[k] || '#667085' }));
    window.Charts.hbars($('#chart-reasons'), {
      title: 'Escalations by reason',
      desc: items.map((i) => `${i.label}: ${i.value}`).join(', ') + '.',
      items,
    });
  }
  // ------------------------------------------------------------ knowledge loop
  const SIGNAL_LABELS = { none: 'no answer', weak: 'weak answer', thumbs_down: 'thumbs down', not_solved: '“not solved”', handoff: 'handed off' };
  function spark(perWeek) {
    const NS = 'http://www.w3.org/2000/svg';
    const w = 12;
    const max = Math.max(1, ...perWeek.map((p) => p.count));
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('width', String(Math.max(w, perWeek.length * w)));
    svg.setAttribute('height', '20');
    svg.setAttribute('role', 'img');
    const label = perWeek.map((p) => `${p.week}: ${p.count}`).join(', ');
    svg.setAttribute('aria-label', `Questions per week — ${label}`);
    const title = document.createElementNS(NS, 'title');
    title.textContent = label;
    svg.append(title);
    perWeek.forEach((p, i) => {
      const hgt = Math.max(2, Math.round((p.count / max) * 18));
      const r = document.createElementNS(NS, 'rect');
      r.setAttribute('x', String(i * w + 1));
      r.setAttribute('y', String(20 - hgt));
      r.setAttribute('width', String(w - 3));
      r.setAttribute('height', String(hgt));
      svg.append(r);
    });
    return svg;
  }
  async function loadClusters() {
    const box = $('#gap-clusters');
    const err = $('#gaps-error');
    err.hidden = true;
    let data;
    try {
      data = await api(`/v1/admin/gap-clusters?${rangeParams()}`);
    } catch (e) {
      if (e.status !== 401) {
        err.textContent = `Couldn't load the gap report: ${e.message}`;
        err.hidden = false;
      }
      return;
    }
    const clusters = data.clusters || [];
    if (!clusters.length) {
      box.replaceChildren(h('p', { class: 'empty' }, 'No unanswered questions in this range.'));
      return;
    }
    box.replaceChildren(
      h('p', { class: 'help', id: 'gap-summary' }, `${data.questions} questions in ${clusters.length} topics, ${data.from} → ${data.to}.`),
      h(
        'ol',
        { class: 'clusters', 'aria-labelledby': 'gap-summary' },
        clusters.map((c) => {
          const draftBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'draft', disabled: !c.canDraft, title: c.canDraft ? null : 'Needs at least one resolved handoff with a resolution' }, 'Draft article');
          draftBtn.addEventListener('click', () => makeDraft(c, draftBtn));
          return h(
            'li',
            { class: 'cluster', 'data-cluster': c.id },
            h('h3', null, c.label),
            h(
              'div',
              { class: 'facts-line' },
              h('span', { 'data-count': String(c.count) }, `${c.count} question${c.count === 1 ? '' : 's'} · ${c.conversations} conversation${c.conversations === 1 ? '' : 's'}`),
              h('span', null, `last ${relative(c.lastSeen)}`),
              spark(c.perWeek || []),
              h('span', { class: 'chip', title: 'Lowest plan among the askers' }, `audience: ${c.audience}`),
              Object.entries(c.signals || {}).map(([k, n]) => h('span', { class: 'chip' }, `${SIGNAL_LABELS[k] || k} ${n}`))
            ),
            h('ul', { class: 'examples' }, (c.examples || []).map((e) => h('li', null, e))),
            (c.cases || []).length
              ? h(
                  'ul',
                  { class: 'resolutions', 'aria-label': 'Handoffs in this topic' },
                  c.cases.map((k) => h('li', null, h('code', null, k.caseRef), ` ${k.status || ''}`, k.resolution ? ` — ${k.resolution}` : '', k.ticketId ? h('span', { class: 'chip' }, 'ticket') : null))
                )
              : null,
            h('div', { class: 'actions' }, draftBtn, c.canDraft ? null : h('span', { class: 'help' }, 'No resolved handoff to draft from yet.'))
          );
        })
      )
    );
  }
  async function makeDraft(cluster, btn) {
    const editor = requireAgent();
    if (!editor) return;
    btn.disabled = true;
    const err = $('#gaps-error');
    try {
      const res = await api(`/v1/admin/gap-clusters/${encodeURIComponent(cluster.id)}/draft?${rangeParams()}`, { method: 'POST', body: { editor } });
      await loadDrafts();
      openDraft(res.draft.id);
    } catch (e) {
      if (e.status !== 401) {
        err.textContent = `Couldn't draft: ${e.message}`;
        err.hidden = false;
      }
    } finally {
      btn.disabled = false;
    }
  }
  async function loadDrafts() {
    const box = $('#drafts');
    let data;
    try {
      data = await api('/v1/admin/drafts');
    } catch (e) {
      if (e.status !== 401) box.replaceChildren(h('p', { class: 'error' }, e.message));
      return;
    }
    const drafts = data.drafts || [];
    if (!drafts.length) {
      box.replaceChildren(h('p', { class: 'empty' }, 'No drafts yet. Draft one from a topic above.'));
      return;
    }
    box.replaceChildren(
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { id: 'drafts-table' },
          h('caption', null, `${drafts.length} draft(s)`),
          h('thead', null, h('tr', null, ['Title', 'Status', 'Audience', 'From', 'Updated', ''].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            null,
            drafts.map((d) =>
              h(
                'tr',
                { 'data-draft': d.id },
                h('th', { scope: 'row' }, d.title),
                h('td', null, h('span', { class: `badge ${d.status === 'published' ? 'resolved' : 'open'}` }, d.status)),
                h('td', null, d.audience),
                h('td', null, `${d.questionCount} questions, ${d.caseRefs.length} resolutions (${d.writtenBy})`),
                h('td', null, `${when(d.updatedAt)}${d.updatedBy ? ' · ' + d.updatedBy : ''}`),
                h('td', null, d.status === 'published' && d.publishedSlug ? h('a', { href: `/help/${encodeURIComponent(d.publishedSlug)}` }, 'View article') : h('button', { type: 'button', 'data-action': 'open-draft', onclick: () => openDraft(d.id) }, 'Edit'))
              )
            )
          )
        )
      )
    );
  }
  async function openDraft(id) {
    const panel = $('#draft-editor');
    let data;
    try {
      data = await api(`/v1/admin/drafts/${encodeURIComponent(id)}`);
    } catch (e) {
      if (e.status !== 401) panel.replaceChildren(h('p', { class: 'error', role: 'alert' }, e.message));
      panel.hidden = false;
      return;
    }
    const d = data.draft;
    const status = h('p', { class: 'toast', role: 'status' });
    const area = h('textarea', { id: 'draft-markdown', spellcheck: 'true', 'aria-describedby': 'draft-help' });
    area.value = d.markdown;
    const run = async (label, fn) => {
      status.textContent = `${label}…`;
      try {
        const out = await fn();
        await loadDrafts();
        status.textContent = `${label} — done.`;
        return out;
      } catch (e) {
        status.textContent = '';
        if (e.status !== 401) status.replaceChildren(h('span', { class: 'error' }, `${label} failed: ${e.message}`));
        return null;
      }
    };
    const save = () => {
      const editor = requireAgent();
      if (!editor) return Promise.resolve(null);
      return run('Save', () => api(`/v1/admin/drafts/${encodeURIComponent(d.id)}`, { method: 'PUT', body: { editor, markdown: area.value } }));
    };
    const saveBtn = h('button', { type: 'button', 'data-action': 'save-draft' }, 'Save draft');
    saveBtn.addEventListener('click', save);
    const pubBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'publish-draft' }, 'Publish');
    pubBtn.addEventListener('click', async () => {
      const editor = requireAgent();
      if (!editor) return;
      if ((await save()) === null) return;
      const out = await run('Publish', () => api(`/v1/admin/drafts/${encodeURIComponent(d.id)}/publish`, { method: 'POST', body: { editor } }));
      if (out) {
        panel.replaceChildren(
          h('p', { class: 'toast', role: 'status', 'data-published': out.article.slug }, `Published “${out.article.title}” (${out.article.status}). `, h('a', { href: `/help/${encodeURIComponent(out.article.slug)}` }, 'View the article'))
        );
      }
    });
    const discardBtn = h('button', { type: 'button', class: 'danger', 'data-action': 'discard-draft' }, 'Discard');
    discardBtn.addEventListener('click', async () => {
      const editor = requireAgent();
      if (!editor) return;
      if (await run('Discard', () => api(`/v1/admin/drafts/${encodeURIComponent(d.id)}/discard`, { method: 'POST', body: { editor } }))) panel.hidden = true;
    });
    const editable = d.status === 'draft';
    [area, saveBtn, pubBtn, discardBtn].forEach((el) => (el.disabled = !editable));
    panel.replaceChildren(
      h('div', { class: 'detail-head' }, h('h3', { id: 'draft-editor-title' }, `Draft: ${d.title}`)),
      h('p', { class: 'help', id: 'draft-help' }, `From ${d.questionCount} questions and cases ${d.caseRefs.join(', ') || '—'}; written ${d.writtenBy === 'extractive' ? 'extractively from the resolutions' : 'by ' + d.writtenBy}. Check every step before publishing.`),
      h('div', { class: 'draft-form' }, h('label', { for: 'draft-markdown' }, 'Markdown (front matter: title, slug, audience, locale…)'), area),
      h('div', { class: 'actions' }, saveBtn, pubBtn, discardBtn, status)
    );
    panel.hidden = false;
    panel.focus();
    panel.scrollIntoView({ block: 'nearest' });
  }
  function renderAssistWeeks(weeks) {
    const box = $('#assist-weeks');
    if (!weeks.length) {
      box.replaceChildren(h('p', { class: 'empty' }, 'No suggestions shown in this range.'));
      return;
    }
    const cols = [['shown', 'Shown'], ['inserted', 'Inserted'], ['sentUnchanged', 'Sent unchanged'], ['sentEdited', 'Sent edited']];
    box.replaceChildren(
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { id: 'assist-table' },
          h('caption', null, 'Suggested replies per ISO week'),
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Week'), cols.map(([, label]) => h('th', { scope: 'col', class: 'num' }, label)))),
          h('tbody', null, weeks.map((w) => h('tr', { 'data-week': w.week }, h('th', { scope: 'row' }, w.week), cols.map(([k]) => h('td', { class: 'num', 'data-col': k }, String(w[k] || 0))))))
        )
      )
    );
  }
  function renderLoopWeeks(loop) {
    const box = $('#loop-weeks');
    if (!loop) {
      box.replaceChildren();
      return;
    }
    const t = loop.totals || {};
    const rows = (loop.perWeek || []).map((w) => h('tr', null, h('th', { scope: 'row' }, w.week), h('td', { class: 'num' }, w.ticketsFromResolutions), h('td', { class: 'num' }, w.answeredByThem), h('td', { class: 'num' }, w.conversations)));
    // replaceChildren would print a null argument as the text "null": pass only real nodes
    const parts = [
      h('p', { 'data-loop': 'totals' }, `${t.ticketsFromResolutions || 0} tickets from resolutions in this range; ${t.answeredByThem || 0} strong answers cited them (${t.conversations || 0} conversations that needed no person).`),
      rows.length
        ? h(
            'div',
            { class: 'table-scroll' },
            h(
              'table',
              { id: 'loop-table' },
              h('caption', null, 'Per ISO week'),
              h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Week'), h('th', { scope: 'col', class: 'num' }, 'Tickets from resolutions'), h('th', { scope: 'col', class: 'num' }, 'Strong answers citing them'), h('th', { scope: 'col', class: 'num' }, 'Conversations'))),
              h('tbody', null, rows)
            )
          )
        : null,
    ];
    box.replaceChildren(...parts.filter(Boolean));
  }
  async function loadTickets() {
    const box = $('#res-tickets');
    let data;
    try {
      data = await api('/v1/admin/tickets');
    } catch (e) {
      if (e.status !== 401) box.replaceChildren(h('p', { class: 'error' }, e.message));
      return;
    }
    const tickets = data.tickets || [];
    if (!tickets.length) {
      box.replaceChildren(h('p', { class: 'empty' }, 'No resolution has become knowledge yet.'));
      return;
    }
    box.replaceChildren(
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { id: 'tickets-table' },
          h('caption', null, `${tickets.length} ticket(s) from resolutions`),
          h('thead', null, h('tr', null, ['Problem', 'Resolution', 'Audience', 'Quality', 'Status', ''].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            null,
            tickets.map((t) => {
              const toggle = h('button', { type: 'button', class: t.status === 'resolved' ? 'danger' : null, 'data-action': t.status === 'resolved' ? 'unpublish-ticket' : 'republish-ticket' }, t.status === 'resolved' ? 'Unpublish' : 'Publish again');
              toggle.addEventListener('click', () => patchTicket(t.id, { status: t.status === 'resolved' ? 'unpublished' : 'resolved' }));
              const edit = h('button', { type: 'button', 'data-action': 'edit-ticket' }, 'Edit');
              edit.addEventListener('click', () => editTicket(t, edit.closest('tr')));
              return h(
                'tr',
                { 'data-ticket': t.id },
                h('th', { scope: 'row' }, t.subject, h('div', { class: 'help' }, h('code', null, t.caseRef || t.id), t.product ? ` · ${t.product}` : '')),
                h('td', null, t.resolution.length > 240 ? t.resolution.slice(0, 238) + '…' : t.resolution),
                h('td', null, t.audience),
                h('td', { class: 'num' }, num(t.quality, 2)),
                h('td', null, h('span', { class: `badge ${t.status === 'resolved' ? 'resolved' : 'due'}` }, t.status === 'resolved' ? 'searchable' : t.status), (t.reviewFlags || []).length ? h('div', { class: 'help', 'data-flags': t.reviewFlags.join(' ') }, `held for review: ${t.reviewFlags.join(', ')}`) : null),
                h('td', null, edit, ' ', toggle)
              );
            })
          )
        )
      )
    );
  }
  function editTicket(t, row) {
    const area = h('textarea', { id: `ticket-res-${t.id}`, 'aria-label': 'Resolution' });
    area.value = t.resolution;
    const save = h('button', { type: 'button', class: 'primary', 'data-action': 'save-ticket' }, 'Save');
    save.addEventListener('click', () => patchTicket(t.id, { resolution: area.value.trim() }));
    const cell = h('td', { colspan: '6', class: 'ticket-edit' }, h('label', { for: area.id }, 'Resolution'), area, h('div', { class: 'actions' }, save));
    row.after(h('tr', { 'data-editing': t.id }, cell));
    area.focus();
  }
  async function patchTicket(id, changes) {
    const editor = requireAgent();
    if (!editor) return;
    const err = $('#tickets-error');
    err.hidden = true;
    try {
      await api(`/v1/admin/tickets/${encodeURIComponent(id)}`, { method: 'PATCH', body: Object.assign({ editor }, changes) });
    } catch (e) {
      if (e.status !== 401) {
        err.textContent = e.message;
        err.hidden = false;
      }
    }
    loadTickets();
  }

  // ------------------------------------------------------------ escalation queue
  function slaBadge(c) {
    if (c.status === 'resolved') return h('span', { class: 'badge resolved' }, 'done');
    if (c.breached) return h('span', { class: 'badge breached', 'data-sla': 'breached' }, `SLA breached ${relative(c.slaDueAt)}`);
    const soon = Date.parse(c.slaDueAt) - Date.now() < 3600000;
    return h('span', { class: 'badge ' + (soon ? 'soon' : 'due'), 'data-sla': 'due', title: when(c.slaDueAt) }, `due ${relative(c.slaDueAt)}`);
  }
  function customerLabel(c) {
    if (!c) return 'anonymous';
    return `${c.name || c.id}${c.plan ? ' · ' + c.plan : ''}`;
  }
  async function loadQueue() {
    const status = $('#status-filter').value;
    const box = $('#queue');
    let data;
    try {
      data = await api('/v1/admin/escalations' + (status ? `?status=${status}` : ''));
    } catch (e) {
      if (e.status !== 401) box.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Couldn't load the queue: ${e.message}`));
      return;
    }
    const items = data.escalations || [];
    if (!items.length) {
      box.replaceChildren(h('p', { class: 'empty' }, `No ${status || ''} escalations.`));
      return;
    }
    box.replaceChildren(
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { id: 'queue-table' },
          h('caption', null, `${items.length} ${status || 'total'} escalation${items.length === 1 ? '' : 's'}`),
          h(
            'thead',
            null,
            h('tr', null, ['Case', 'Status', 'Reason', 'Customer', 'Asked for', 'SLA', 'Claimed by'].map((c) => h('th', { scope: 'col' }, c)))
          ),
          h(
            'tbody',
            null,
            items.map((c) =>
              h(
                'tr',
                { 'data-case': c.caseRef, class: c.caseRef === selectedCase ? 'selected' : null },
                h('th', { scope: 'row' }, h('button', { type: 'button', class: 'case-btn', onclick: () => openCase(c.caseRef), 'aria-label': `Open case ${c.caseRef}` }, c.caseRef)),
                h('td', null, h('span', { class: `badge ${c.status}` }, c.status)),
                h('td', null, REASON_LABELS[c.reason] || c.reason, c.intent ? h('div', null, h('span', { class: 'chip' }, c.intent)) : null),
                h('td', null, customerLabel(c.customer)),
                h(
                  'td',
                  null,
                  (c.askedFor || '').length > 90 ? c.askedFor.slice(0, 88) + '…' : c.askedFor || '—',
                  c.trigger && c.trigger !== c.askedFor
                    ? h('div', { class: 'help' }, 'Trigger: “', c.trigger.length > 70 ? c.trigger.slice(0, 68) + '…' : c.trigger, '”', c.sentiment ? ` (${c.sentiment})` : '')
                    : null
                ),
                h('td', null, slaBadge(c)),
                h('td', null, c.claimedBy || '—')
              )
            )
          )
        )
      )
    );
  }
  function agentName() {
    return $('#agent').value.trim();
  }
  function requireAgent() {
    const name = agentName();
    if (!name) {
      $('#agent').focus();
      $('#agent').setAttribute('aria-invalid', 'true');
      return null;
    }
    $('#agent').removeAttribute('aria-invalid');
    try {
      sessionStorage.setItem(AGENT_KEY, name);
    } catch (_) {
      /* ignore */
    }
    return name;
  }
  async function openCase(caseRef, keepFocus) {
    selectedCase = caseRef;
    document.querySelectorAll('#queue-table tr[data-case]').forEach((tr) => tr.classList.toggle('selected', tr.dataset.case === caseRef));
    const detail = $('#detail');
    let data;
    try {
      data = await api(`/v1/admin/escalations/${encodeURIComponent(caseRef)}`);
    } catch (e) {
      if (e.status === 401) return;
      detail.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Couldn't open ${caseRef}: ${e.message}`));
      detail.hidden = false;
      return;
    }
    renderDetail(data.escalation, data.messages || [], data.suggestedResolution);
    detail.hidden = false;
    detail.parentElement.classList.add('with-detail');
    if (!keepFocus) {
      detail.focus();
      detail.scrollIntoView({ block: 'nearest' });
    }
  }
  function dl(rows) {
    const el = h('dl', { class: 'packet' });
    for (const [k, v] of rows) {
      if (v === undefined) continue;
      el.append(h('dt', null, k), h('dd', null, v === null || v === '' ? '—' : v));
    }
    return el;
  }
  // ------------------------------------------------------------ agent assist
  async function loadSuggestion(c, panel, replyBox) {
    let s;
    try {
      s = await api(`/v1/admin/escalations/${encodeURIComponent(c.caseRef)}/suggestion`);
    } catch (e) {
      panel.removeAttribute('aria-busy');
      if (e.status !== 401) panel.replaceChildren(panel.firstChild, h('p', { class: 'error' }, `Couldn't draft a reply: ${e.message}`));
      return;
    }
    panel.removeAttribute('aria-busy');
    panel.dataset.kind = s.kind;
    panel.replaceChildren(panel.firstChild, ...renderSuggestion(c, s, replyBox));
  }
  function renderSuggestion(c, s, replyBox) {
    const kindLabel = { answer: 'drafted from the sources', policy: 'policy: the decision is yours', none: 'nothing to draft from' }[s.kind] || s.kind;
    const parts = [h('p', { class: 'help' }, h('span', { class: 'chip' }, kindLabel), ' ', s.confidence ? h('span', { class: `band-${s.confidence}` }, `confidence ${s.confidence}`) : null, s.model && s.model !== 'rules' ? ` · ${s.model}` : null)];
    if (s.decide) parts.push(h('p', { class: 'hint', 'data-assist': 'decide' }, h('strong', null, 'You decide: '), s.decide));
    if (s.text) {
      parts.push(h('blockquote', { class: 'draft', 'data-assist': 'draft', lang: s.locale }, s.text));
      const insert = h('button', { type: 'button', class: 'primary', 'data-action': 'insert-suggestion', disabled: c.status === 'resolved' }, 'Insert into reply');
      insert.addEventListener('click', async () => {
        replyBox.value = s.text;
        replyBox.dataset.suggestion = s.suggestionId;
        replyBox.focus();
        try {
          await api(`/v1/admin/escalations/${encodeURIComponent(c.caseRef)}/suggestion/events`, { method: 'POST', body: { suggestionId: s.suggestionId, event: 'inserted' } });
        } catch (_) {
          /* counting use must never block the reply */
        }
      });
      parts.push(h('div', { class: 'actions' }, insert));
    } else {
      parts.push(h('p', { class: 'empty' }, 'Nothing this customer may read answers it; the sources and similar cases below may still help.'));
    }
    if (s.sources.length) {
      parts.push(
        h('h5', null, 'Sources (what this customer may read)'),
        h('ol', { class: 'sources', 'data-assist': 'sources' }, s.sources.map((src) => h('li', { 'data-doc': src.docId, class: src.cited ? 'cited' : null }, h('span', { class: 'chip' }, `[${src.n}]`), ' ', src.url ? h('a', { href: src.url, target: '_blank', rel: 'noopener' }, src.breadcrumb || src.title) : `${src.docId} · ${src.title}`, src.cited ? h('span', { class: 'tag' }, ' cited') : null, ` · ${src.kind} · ${src.audience}`)))
      );
    }
    if (s.similar.length) {
      parts.push(
        h('h5', null, 'Similar resolved cases'),
        h('ul', { class: 'similar', 'data-assist': 'similar' }, s.similar.map((x) => h('li', { 'data-similar': x.id }, h('strong', null, `${x.id} · ${x.title}`), h('br'), x.resolution)))
      );
    }
    return parts;
  }

  function renderDetail(c, messages, suggested) {
    const detail = $('#detail');
    const cust = c.customer || null;
    const conv = c.conversation || {};
    const att = c.attempted || {};
    const passages = att.passages || [];
    const tools = att.tools || [];
    const status = h('p', { class: 'toast', role: 'status' });

    const act = async (label, fn) => {
      status.textContent = `${label}…`;
      try {
        await fn();
        status.textContent = `${label} — done.`;
        await Promise.all([openCase(c.caseRef, true), loadQueue(), loadOverview()]);
        $('#detail').querySelector('.toast').textContent = `${label} — done.`;
      } catch (e) {
        status.textContent = '';
        if (e.status !== 401) status.replaceChildren(h('span', { class: 'error' }, `${label} failed: ${e.message}`));
      }
    };
    const claimBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'claim', disabled: c.status !== 'open' }, c.status === 'open' ? 'Claim' : `Claimed${c.claimedBy ? ' by ' + c.claimedBy : ''}`);
    claimBtn.addEventListener('click', () => {
      const agent = requireAgent();
      if (agent) act('Claim', () => api(`/v1/admin/escalations/${encodeURIComponent(c.caseRef)}/claim`, { method: 'POST', body: { agent } }));
    });
    const resolveBtn = h('button', { type: 'button', 'data-action': 'resolve', disabled: c.status === 'resolved', 'aria-expanded': 'false', 'aria-controls': 'resolve-form' }, c.status === 'resolved' ? 'Resolved' : 'Resolve…');
    const resolutionBox = h('textarea', { id: 'resolution-text', maxlength: '4000', 'aria-describedby': 'resolution-help' });
    resolutionBox.value = suggested || '';
    const consent = h('input', { type: 'checkbox', id: 'knowledge-consent' });
    const rung = cust && cust.plan ? cust.plan : 'any';
    const quality = h(
      'select',
      { id: 'resolution-quality' },
      h('option', { value: '0.9' }, 'Confirmed fix'),
      h('option', { value: '0.8' }, 'Likely fix'),
      h('option', { value: '0.5' }, 'Workaround / one-off (kept, never retrieved)')
    );
    // what will be published, exactly: written from the case (links, secrets, names and PII
    // removed) and editable before it is published
    const subjectBox = h('input', { type: 'text', id: 'knowledge-subject', maxlength: '300' });
    const problemBox = h('textarea', { id: 'knowledge-problem', maxlength: '4000', rows: '3' });
    const previewNote = h('p', { class: 'help', id: 'knowledge-preview-note', role: 'status' });
    const preview = h(
      'div',
      { class: 'knowledge-preview', id: 'knowledge-preview', hidden: true },
      h('label', { for: 'knowledge-subject' }, 'Published title (other customers see this)'),
      subjectBox,
      h('label', { for: 'knowledge-problem' }, 'Published problem'),
      problemBox,
      previewNote
    );
    const loadPreview = async () => {
      const resolution = resolutionBox.value.trim();
      if (!consent.checked || !resolution) { preview.hidden = true; return; }
      try {
        const r = await api(`/v1/admin/escalations/${encodeURIComponent(c.caseRef)}/knowledge-preview`, { method: 'POST', body: { resolution } });
        subjectBox.value = r.ticket.subject;
        problemBox.value = r.ticket.symptom;
        previewNote.textContent = r.ticket.reviewFlags && r.ticket.reviewFlags.length
          ? 'The screen will hold this ticket for review (instruction-like text found).'
          : `Published for the ${r.ticket.audience} audience and above.`;
        preview.hidden = false;
      } catch (e) {
        previewNote.textContent = `Preview failed: ${e.message}`;
        preview.hidden = false;
      }
    };
    consent.addEventListener('change', loadPreview);
    resolutionBox.addEventListener('change', () => { if (consent.checked) loadPreview(); });
    const confirmBtn = h('button', { type: 'submit', class: 'primary', 'data-action': 'confirm-resolve' }, 'Resolve case');
    const resolveForm = h(
      'form',
      { class: 'resolve-form', id: 'resolve-form', hidden: true, novalidate: true },
      h('label', { for: 'resolution-text' }, 'Resolution (prefilled from your replies)'),
      resolutionBox,
      h('p', { class: 'help', id: 'resolution-help' }, 'Short and general: what fixed it. Emails, phone numbers and card numbers are masked.'),
      h('div', null, consent, h('label', { for: 'knowledge-consent', class: 'inline' }, `May become knowledge: a searchable resolved ticket for customers on the ${rung} plan and above`)),
      preview,
      h('label', { for: 'resolution-quality' }, 'How sure is the fix?'),
      quality,
      h('div', { class: 'actions' }, confirmBtn)
    );
    resolveBtn.addEventListener('click', () => {
      resolveForm.hidden = !resolveForm.hidden;
      resolveBtn.setAttribute('aria-expanded', String(!resolveForm.hidden));
      if (!resolveForm.hidden) resolutionBox.focus();
    });
    resolveForm.addEventListener('submit', (e) => {
      e.preventDefault();
      const resolution = resolutionBox.value.trim();
      if (consent.checked && !resolution) {
        resolutionBox.setAttribute('aria-invalid', 'true');
        resolutionBox.focus();
        return;
      }
      const body = { agent: agentName() || null, resolution: resolution || null, knowledge: consent.checked, quality: Number(quality.value) };
      if (consent.checked && !preview.hidden) {
        if (subjectBox.value.trim()) body.subject = subjectBox.value.trim();
        if (problemBox.value.trim()) body.symptom = problemBox.value.trim();
      }
      act('Resolve', async () => {
        await api(`/v1/admin/escalations/${encodeURIComponent(c.caseRef)}/resolve`, { method: 'POST', body });
        loadTickets();
      });
    });
    const closeBtn = h('button', { type: 'button', 'aria-label': 'Close case details' }, 'Close');
    closeBtn.addEventListener('click', () => {
      detail.hidden = true;
      detail.parentElement.classList.remove('with-detail');
      selectedCase = null;
      const btn = document.querySelector(`#queue-table tr[data-case="${CSS.escape(c.caseRef)}"] button`);
      if (btn) btn.focus();
    });

    const replyBox = h('textarea', { id: 'reply-text', rows: '4', required: true, maxlength: '8000', disabled: c.status === 'resolved' });
    const replyForm = h(
      'form',
      { class: 'reply-form', novalidate: true },
      h('label', { for: 'reply-text' }, 'Reply to the customer (appears in their chat widget)'),
      replyBox,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', 'data-action': 'reply', disabled: c.status === 'resolved' }, 'Send reply'))
    );
    replyForm.addEventListener('submit', (e) => {
      e.preventDefault();
      const content = replyBox.value.trim();
      if (!content) {
        replyBox.focus();
        return;
      }
      const agent = requireAgent();
      if (!agent) return;
      const body = { agent, content };
      if (replyBox.dataset.suggestion) body.suggestionId = replyBox.dataset.suggestion;
      act('Reply', () => api(`/v1/admin/escalations/${encodeURIComponent(c.caseRef)}/reply`, { method: 'POST', body }));
    });

    const assistPanel = h('section', { id: 'assist', class: 'assist', 'aria-labelledby': 'assist-title', 'aria-busy': 'true' }, h('h4', { id: 'assist-title' }, 'Suggested reply'), h('p', { class: 'help' }, 'Drafting a reply from what this customer may read…'));
    loadSuggestion(c, assistPanel, replyBox);

    const gapHint =
      passages.length === 0
        ? h('p', { class: 'hint' }, 'Nothing was retrieved for this request — likely a knowledge gap (or the bot was not allowed to answer).')
        : null;

    const parts = [
      h(
        'div',
        { class: 'detail-head' },
        h('div', null, h('h3', { id: 'detail-title' }, `Case ${c.caseRef}`), h('p', { class: 'help' }, h('span', { class: `badge ${c.status}` }, c.status), ' ', slaBadge(c))),
        closeBtn
      ),
      h('div', { class: 'actions' }, claimBtn, resolveBtn, status),
      c.status === 'resolved' ? null : resolveForm,
      c.status === 'resolved' && c.resolution ? dl([['Resolution', c.resolution], ['Knowledge', c.ticketId ? `ticket ${c.ticketId}` : 'not shared']]) : null,
      h('h4', null, 'Request'),
      dl([
        ['Asked for', c.askedFor],
        ['Trigger', c.trigger && c.trigger !== c.askedFor ? `“${c.trigger}”` : null],
        ['Reason', REASON_LABELS[c.reason] || c.reason],
        ['Intent', c.intent ? h('span', { class: 'chip' }, c.intent) : null],
        ['Sentiment', c.sentiment],
        ['Opened', when(c.createdAt)],
        ['SLA due', `${when(c.slaDueAt)} (${relative(c.slaDueAt)})`],
        ['Claimed by', c.claimedBy],
      ]),
      h('h4', null, 'Customer'),
      cust
        ? dl([
            ['Name', cust.name],
            ['Email', cust.email],
            ['Customer id', cust.id],
            ['Plan', cust.plan],
            ['Seats', cust.seats === undefined ? undefined : String(cust.seats)],
            ['Subscription', cust.subscriptionStatus],
            ['Renews', cust.renewsAt ? when(cust.renewsAt) : null],
          ])
        : h('p', { class: 'empty' }, 'Anonymous visitor (not signed in).'),
      h('h4', null, 'Conversation'),
      dl([
        ['Turns', String(conv.turnCount ?? '—')],
        ['Failed turns', String(conv.failedTurns ?? '—')],
        ['Summary', conv.summary || null],
        ['Facts', Array.isArray(conv.facts) && conv.facts.length ? h('ul', { class: 'facts' }, conv.facts.map((f) => h('li', null, typeof f === 'string' ? f : Object.entries(f).map(([k, v]) => `${k}: ${v}`).join(', ')))) : null],
      ]),
      h('h4', null, 'What the assistant tried'),
      dl([
        ['Confidence', att.confidence ? h('span', { class: `band-${att.confidence}` }, att.confidence) : null],
        ['Top rerank score', num(att.topRerankScore, 3)],
        ['Tools', tools.length ? tools.map((t) => `${t.tool} (${t.ok ? 'ok' : 'failed'}, ${t.found ? 'found' : 'not found'})`).join('; ') : 'none'],
      ]),
      gapHint,
      passages.length
        ? h(
            'div',
            { class: 'table-scroll' },
            h(
              'table',
              null,
              h('caption', null, 'Passages retrieved'),
              h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col' }, 'Title / breadcrumb'), h('th', { scope: 'col', class: 'num' }, 'Rerank'))),
              h('tbody', null, passages.map((p) => h('tr', null, h('td', null, p.kind), h('td', null, p.breadcrumb || p.title), h('td', { class: 'num' }, num(p.rerankScore, 3)))))
            )
          )
        : null,
      h('h4', null, `Transcript (${messages.length} messages)`),
      h(
        'ol',
        { class: 'transcript', 'aria-label': 'Transcript' },
        messages.map((m) => {
          const meta = m.meta || {};
          const role = m.role === 'user' ? 'Customer' : m.role === 'agent' ? `Agent${meta.agent ? ' · ' + meta.agent : ''}` : 'Assistant';
          const info = m.role === 'assistant' && meta.confidence ? `${meta.intent || ''} · confidence ${meta.confidence}${meta.escalated ? ' · escalated (' + (meta.escalationReason || '') + ')' : ''}` : '';
          return h('li', { class: m.role, 'data-role': m.role }, h('span', { class: 'role' }, `${role} · ${when(m.createdAt)}`), m.content, info ? h('span', { class: 'meta' }, info) : null);
        })
      ),
      assistPanel,
      replyForm,
      h('details', null, h('summary', null, 'Raw handoff packet (JSON)'), h('pre', { class: 'raw' }, JSON.stringify(c, null, 2))),
    ];
    detail.replaceChildren(...parts.filter(Boolean));
    const tr = detail.querySelector('.transcript');
    tr.scrollTop = tr.scrollHeight;
  }

  // ------------------------------------------------------------ wiring
  $('#login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('#token').value.trim();
    if (!t) {
      $('#login-error').textContent = 'Enter the admin token.';
      $('#token').focus();
      return;
    }
    $('#login-error').textContent = '';
    signIn(t);
  });
  $('#sign-out').addEventListener('click', () => signOut(''));
  $('#range').addEventListener('submit', (e) => {
    e.preventDefault();
    loadOverview();
  });
  document.querySelectorAll('[data-days]').forEach((b) =>
    b.addEventListener('click', () => {
      setRange(Number(b.dataset.days));
      loadOverview();
    })
  );
  $('#status-filter').addEventListener('change', loadQueue);
  $('#refresh-queue').addEventListener('click', () => {
    loadQueue();
    if (selectedCase) openCase(selectedCase, true);
  });
  try {
    $('#agent').value = sessionStorage.getItem(AGENT_KEY) || '';
  } catch (_) {
    /* ignore */
  }
  let resizeTimer = null;
  window.addEventListener('resize', () => {
    // Charts are drawn at their container's pixel width: redraw after a resize settles.
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => lastMetrics && renderCharts(lastMetrics), 150);
  });
  setRange(30);
  const saved = token();
  if (saved) signIn(saved);
  else signOut('');
})();
