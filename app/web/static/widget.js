/*! Concierge support widget — one <script> tag, no build step, no dependencies.
 *
 *   <script src="https://support.example.com/widget.js" defer
 *           data-api=""                 API base URL; empty = the origin this file was served from
 *           data-identity-token=""      JWT signed by your backend (HS256, sub = customer id);
 *                                       empty = anonymous visitor
 *           data-title="Harborline Support"
 *           data-accent="#0b5fff"       any CSS colour; text on it is chosen for contrast
 *           data-greeting="…"           optional first line shown in an empty conversation
 *           data-position="right"       or "left"
 *           data-open="false"></script> "true" opens the panel on load
 *
 * JavaScript API (window.Concierge):
 *   open(), close(), toggle(), reset()            panel and a fresh conversation
 *   identify(token | null | () => Promise<token>) switch customer; a function is called again
 *                                                 whenever a new session is needed (tokens are
 *                                                 short-lived), so pass one if you can
 *   send(text) -> Promise<{meta, message} | null> ask a question as the customer
 *   state                                         {conversationId, customer, anonymous, status, …}
 * Events dispatched on `document` (CustomEvent, payload in `detail`):
 *   concierge:ready, concierge:identity {customer, anonymous}, concierge:meta {meta, question},
 *   concierge:turn {meta, message, question}, concierge:escalated {caseRef},
 *   concierge:history {messages}, concierge:error {kind, message, status}
 *
 * The conversation id and session token are kept in localStorage, keyed by API base and by
 * identity (the JWT `sub`, or "anon"), so a reload resumes the conversation and switching
 * customer starts from that customer's own state. A conversation is created on the first
 * message, not on open, so opening the panel does not inflate the conversation metrics.
 */
(function () {
  'use strict';
  if (window.Concierge && window.Concierge.__widget) return;

  // ---------------------------------------------------------------- configuration
  const script =
    document.currentScript ||
    Array.from(document.scripts).find((s) => /\/widget\.js(?:[?#]|$)/.test(s.src)) ||
    null;
  const data = (script && script.dataset) || {};
  const scriptOrigin = script && script.src ? new URL(script.src, location.href).origin : location.origin;
  const API = (data.api && data.api.trim() ? new URL(data.api.trim(), location.href).href : scriptOrigin)
    .replace(/\/+$/, '');

  const accent = validColor(data.accent) || '#0b5fff';
  const cfg = {
    title: (data.title || 'Support').trim(),
    greeting:
      data.greeting ||
      'Hi! Ask me anything — I answer from our help center and can look up your orders and ' +
        'subscription. You can reach a person at any time.',
    position: data.position === 'left' ? 'left' : 'right',
    startOpen: data.open === 'true',
  };
  const POLL_OPEN_MS = 3000;
  const POLL_BACKGROUND_MS = 15000;
  const MAX_LEN = 4000;
  const LS_PREFIX = 'concierge:v1:' + API + ':';

  // ---------------------------------------------------------------- small utilities
  function validColor(v) {
    return v && window.CSS && CSS.supports('color', v) ? v : null;
  }
  function luminance(hex) {
    const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(hex || '');
    if (!m) return null;
    let x = m[1];
    if (x.length === 3) x = x.split('').map((c) => c + c).join('');
    const [r, g, b] = [0, 2, 4]
      .map((i) => parseInt(x.slice(i, i + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4)));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  const accentL = luminance(accent);
  // White text when it contrasts better than near-black; link colour is the accent only when
  // it is readable on white (WCAG 4.5:1), else a safe blue.
  const onAccent = accentL === null || 1.05 / (accentL + 0.05) >= (accentL + 0.05) / 0.05 ? '#fff' : '#111827';
  const linkColor = accentL !== null && 1.05 / (accentL + 0.05) >= 4.5 ? accent : '#1d4ed8';

  const enc = encodeURIComponent;
  class WidgetError extends Error {
    constructor(kind, message, status, detail) {
      super(message);
      this.kind = kind;
      this.status = status || 0;
      this.detail = detail || '';
    }
  }
  function emit(name, detail) {
    document.dispatchEvent(new CustomEvent(name, { detail }));
  }
  function jwtSub(token) {
    try {
      const p = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const sub = JSON.parse(atob(p.padEnd(Math.ceil(p.length / 4) * 4, '='))).sub;
      return sub ? String(sub) : null;
    } catch (_) {
      return null;
    }
  }
  function fnv(s) {
    let x = 2166136261;
    for (let i = 0; i < s.length; i++) x = Math.imul(x ^ s.charCodeAt(i), 16777619);
    return (x >>> 0).toString(36);
  }
  function identityKeyFor(token) {
    if (!token) return 'anon';
    const sub = jwtSub(token);
    return sub ? 'sub:' + sub : 'tok:' + fnv(token);
  }
  function safeUrl(u) {
    if (!u) return null;
    try {
      const x = new URL(u, API + '/');
      return x.protocol === 'http:' || x.protocol === 'https:' ? x.href : null;
    } catch (_) {
      return null;
    }
  }
  function fmtDetail(d) {
    if (!d) return '';
    if (typeof d === 'string') return d;
    if (Array.isArray(d)) return d.map((x) => (x && x.msg ? x.msg : String(x))).join('; ');
    try {
      return JSON.stringify(d);
    } catch (_) {
      return '';
    }
  }
  function h(tag, attrs) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
        else el.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (let i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) kid.forEach((k) => append(el, k));
    else el.append(kid.nodeType ? kid : document.createTextNode(String(kid)));
  }

  const ICONS = {
    chat: '<path d="M4 5.5A2.5 2.5 0 0 1 6.5 3h11A2.5 2.5 0 0 1 20 5.5v8a2.5 2.5 0 0 1-2.5 2.5H10l-4.2 3.6c-.5.4-1.3.1-1.3-.6V16A2.5 2.5 0 0 1 4 13.5z" fill="currentColor"/>',
    close: '<path d="M6 6l12 12M18 6L6 18" stroke="currentColor" stroke-width="2.2" stroke-linecap="round"/>',
    plus: '<path d="M12 5v14M5 12h14" stroke="currentColor" stroke-width="2.2" stroke-linecap="round"/>',
    send: '<path d="M4 12l16-8-6 16-2.5-6.5z" fill="currentColor"/>',
    up: '<path d="M7 11v9H4v-9zm2 9h8.2a2 2 0 0 0 2-1.6l1.3-6A2 2 0 0 0 18.5 10H14l.7-3.6A1.7 1.7 0 0 0 13 4.3L9 11z" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/>',
    down: '<path d="M7 13V4H4v9zm2-9h8.2a2 2 0 0 1 2 1.6l1.3 6a2 2 0 0 1-2 2.4H14l.7 3.6a1.7 1.7 0 0 1-1.7 2.1L9 13z" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/>',
    person: '<circle cx="12" cy="8" r="4" fill="currentColor"/><path d="M4 20c.8-4 4-6 8-6s7.2 2 8 6" fill="currentColor"/>',
  };
  function icon(name, size) {
    const span = document.createElement('span');
    span.className = 'ico';
    span.setAttribute('aria-hidden', 'true');
    const s = size || 20;
    span.innerHTML = `<svg viewBox="0 0 24 24" width="${s}" height="${s}" focusable="false">${ICONS[name]}</svg>`;
    return span;
  }

  // ---------------------------------------------------------------- rich text (escaped by construction)
  // A tiny Markdown subset: paragraphs, "-"/"1." lists, **bold**, `code`, [text](url) and
  // citation markers [n] → links to the cited source. Text only ever becomes text nodes.
  const INLINE = /(\*\*[^*\n]+\*\*|`[^`\n]+`|\[[^\]\n]+\]\((?:https?:\/\/|\/)[^)\s]+\)|\[\d{1,2}\])/g;
  function inline(text, cites) {
    const frag = document.createDocumentFragment();
    let last = 0;
    text.replace(INLINE, (tok, _g, at) => {
      if (at > last) frag.append(text.slice(last, at));
      last = at + tok.length;
      if (tok.startsWith('**')) frag.append(h('strong', null, tok.slice(2, -2)));
      else if (tok.startsWith('`')) frag.append(h('code', null, tok.slice(1, -1)));
      else if (/^\[\d+\]$/.test(tok)) frag.append(citeLink(Number(tok.slice(1, -1)), cites));
      else {
        const m = /^\[([^\]]+)\]\(([^)]+)\)$/.exec(tok);
        const href = m && safeUrl(m[2]);
        frag.append(href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, m[1]) : tok);
      }
      return tok;
    });
    if (last < text.length) frag.append(text.slice(last));
    return frag;
  }
  function citeLink(n, cites) {
    const c = (cites || []).find((x) => Number(x.n) === n);
    const href = c && safeUrl(c.url);
    if (!href) return h('span', { class: 'cite' }, `[${n}]`);
    return h(
      'a',
      {
        class: 'cite',
        href,
        target: '_blank',
        rel: 'noopener noreferrer',
        'data-cite': n,
        title: c.title || '',
        'aria-label': `Source ${n}: ${c.title || href}`,
      },
      `[${n}]`
    );
  }
  function rich(text, cites) {
    // Blocks split on blank lines; inside a block, runs of "-"/"1." lines become lists and
    // other runs paragraphs (answers often say "…in both:" and then list items).
    const frag = document.createDocumentFragment();
    const bullet = /^\s*[-*•]\s+/;
    const numbered = /^\s*\d+[.)]\s+/;
    const kindOf = (l) => (bullet.test(l) ? 'ul' : numbered.test(l) ? 'ol' : 'p');
    const blocks = String(text || '').replace(/\r\n?/g, '\n').split(/\n{2,}/);
    for (const block of blocks) {
      const lines = block.split('\n').filter((l) => l.trim() !== '');
      let i = 0;
      while (i < lines.length) {
        const kind = kindOf(lines[i]);
        let j = i;
        while (j < lines.length && kindOf(lines[j]) === kind) j++;
        const run = lines.slice(i, j);
        if (kind === 'p') {
          const p = h('p');
          run.forEach((l, k) => {
            if (k) p.append(h('br'));
            p.append(inline(l.replace(/^#{1,6}\s+/, ''), cites));
          });
          frag.append(p);
        } else {
          const list = h(kind);
          for (const l of run) list.append(h('li', null, inline(l.replace(kind === 'ol' ? numbered : bullet, ''), cites)));
          frag.append(list);
        }
        i = j;
      }
    }
    return frag;
  }
  function plain(text) {
    const frag = document.createDocumentFragment();
    String(text || '')
      .split(/\n{2,}/)
      .forEach((block) => {
        const p = h('p');
        block.split('\n').forEach((l, i) => {
          if (i) p.append(h('br'));
          p.append(l);
        });
        frag.append(p);
      });
    return frag;
  }

  // ---------------------------------------------------------------- styles
  const CSS_TEXT = `
:host { all: initial; }
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
.root { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: #1c2430; -webkit-font-smoothing: antialiased; }
.sr { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
button { font: inherit; color: inherit; cursor: pointer; }
button:disabled { cursor: default; }
:focus-visible { outline: 3px solid var(--cg-link); outline-offset: 2px; }
.ico { display: inline-grid; place-items: center; line-height: 0; }
.launcher { position: fixed; bottom: 20px; right: 20px; width: 60px; height: 60px; border-radius: 50%;
  border: 0; background: var(--cg-accent); color: var(--cg-on-accent); display: grid; place-items: center;
  box-shadow: 0 6px 20px rgba(16,24,40,.28); z-index: 2147483000; transition: transform .15s; }
.launcher:hover { transform: scale(1.05); }
.launcher:focus-visible { outline: 3px solid var(--cg-link); outline-offset: 3px; }
.left .launcher { left: 20px; right: auto; }
.badge { position: absolute; top: -3px; right: -3px; min-width: 22px; height: 22px; padding: 0 6px;
  border-radius: 11px; background: #d92d20; color: #fff; font-size: 12px; font-weight: 700;
  display: grid; place-items: center; border: 2px solid #fff; }
.panel { position: fixed; bottom: 92px; right: 20px; width: 384px; height: min(660px, calc(100vh - 112px));
  min-height: 320px; background: #fff; border-radius: 16px; border: 1px solid rgba(16,24,40,.1);
  box-shadow: 0 16px 48px rgba(16,24,40,.28); display: flex; flex-direction: column; overflow: hidden;
  z-index: 2147483001; }
.left .panel { left: 20px; right: auto; }
header { background: var(--cg-accent); color: var(--cg-on-accent); padding: 12px 8px 12px 16px;
  display: flex; align-items: center; gap: 4px; flex: none; }
.titles { flex: 1; min-width: 0; }
h2 { margin: 0; font-size: 16px; line-height: 1.3; font-weight: 700; }
.sub { margin: 2px 0 0; font-size: 12.5px; opacity: .92; overflow-wrap: anywhere; }
.hbtn { background: transparent; border: 0; color: inherit; width: 38px; height: 38px; border-radius: 10px;
  display: grid; place-items: center; flex: none; }
.hbtn:hover { background: rgba(255,255,255,.18); }
header :focus-visible { outline-color: currentColor; outline-offset: -3px; }
.log { flex: 1; overflow-y: auto; padding: 16px 14px; display: flex; flex-direction: column; gap: 12px;
  background: #f6f7f9; overscroll-behavior: contain; }
.log:focus-visible { outline-offset: -3px; }
.msg { max-width: 88%; display: flex; flex-direction: column; gap: 6px; align-self: flex-start; }
.msg.user { align-self: flex-end; align-items: flex-end; }
.bubble { padding: 10px 13px; border-radius: 14px; background: #fff; border: 1px solid #e3e6eb;
  overflow-wrap: anywhere; }
.bubble p { margin: 0 0 .55em; } .bubble p:last-child { margin-bottom: 0; }
.bubble ul, .bubble ol { margin: .2em 0 .55em; padding-left: 1.3em; } .bubble li { margin: .15em 0; }
.bubble code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #eef1f5;
  padding: 1px 4px; border-radius: 4px; }
.bubble a { color: var(--cg-link); }
.msg.user .bubble { background: var(--cg-accent); color: var(--cg-on-accent); border-color: transparent;
  border-bottom-right-radius: 4px; }
.msg.user.pending .bubble { opacity: .75; }
.msg.user.failed .bubble { opacity: .6; outline: 2px dashed #d92d20; outline-offset: 2px; }
.msg.assistant .bubble, .msg.greeting .bubble { border-bottom-left-radius: 4px; }
.msg.agent .bubble { background: #fff8eb; border: 1px solid #f7d39a; border-left: 4px solid #c26a00;
  border-bottom-left-radius: 4px; }
.who { font-size: 12px; font-weight: 600; color: #7a4100; display: flex; align-items: center; gap: 6px; }
.avatar { width: 22px; height: 22px; border-radius: 50%; background: #c26a00; color: #fff; display: grid;
  place-items: center; font-size: 11px; font-weight: 700; }
.tag { font-weight: 500; color: #8a5a1c; }
.cite { font-size: .78em; vertical-align: super; line-height: 0; font-weight: 700; padding: 0 1px; }
a.cite { color: var(--cg-link); text-decoration: none; }
a.cite:hover { text-decoration: underline; }
.sources { font-size: 12.5px; background: #fff; border: 1px solid #e3e6eb; border-radius: 10px; padding: 8px 10px; }
.sources h3 { margin: 0 0 4px; font-size: 11.5px; letter-spacing: .05em; text-transform: uppercase; color: #5b6472; }
.sources ol { margin: 0; padding-left: 1.5em; } .sources li { margin: 3px 0; }
.sources a { color: var(--cg-link); font-weight: 600; }
.crumb { display: block; color: #5b6472; font-size: 11.5px; }
.kind { display: inline-block; font-size: 10.5px; color: #475467; background: #eef1f5; border-radius: 4px;
  padding: 0 4px; margin-left: 4px; vertical-align: 1px; }
.fb { display: flex; align-items: center; gap: 2px; font-size: 12px; color: #5b6472; flex-wrap: wrap; }
.fb-q { margin-right: 2px; }
.icon-btn { width: 32px; height: 32px; border-radius: 8px; border: 1px solid transparent; background: transparent;
  display: grid; place-items: center; color: #5b6472; }
.icon-btn:hover:not(:disabled) { background: #e9edf2; }
.icon-btn[aria-pressed="true"] { color: var(--cg-link); background: #e8efff; border-color: #c7d7fe; }
.icon-btn:disabled:not([aria-pressed="true"]) { opacity: .45; }
.fb-status { margin-left: 4px; }
.fb-form { display: flex; flex-direction: column; gap: 6px; background: #fff; border: 1px solid #e3e6eb;
  border-radius: 10px; padding: 8px 10px; font-size: 13px; width: 100%; }
.fb-form textarea { min-height: 56px; font-size: 14px; }
.row { display: flex; gap: 8px; flex-wrap: wrap; }
.btn { border: 1px solid #cfd4dc; background: #fff; border-radius: 999px; padding: 5px 14px; font-size: 13.5px;
  font-weight: 600; min-height: 32px; }
.btn:hover:not(:disabled) { background: #f2f4f7; }
.btn.primary { background: var(--cg-accent); color: var(--cg-on-accent); border-color: transparent; }
.btn.primary:hover:not(:disabled) { background: var(--cg-accent); filter: brightness(.92); }
.linkish { border: 0; background: none; color: var(--cg-link); font-weight: 600; padding: 4px 2px;
  text-decoration: underline; text-underline-offset: 2px; font-size: 13px; }
.linkish:disabled { color: #667085; text-decoration: none; }
.notice { align-self: stretch; display: flex; gap: 10px; align-items: flex-start; background: #ecfdf3;
  border: 1px solid #a6f4c5; color: #05603a; border-radius: 12px; padding: 10px 12px; font-size: 13.5px; }
.notice .ico { color: #039855; margin-top: 1px; }
.notice p { margin: 2px 0 0; color: #1f3b2d; }
.notice.muted { background: #f2f4f7; border-color: #e4e7ec; color: #344054; }
.case { font: 700 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; letter-spacing: .02em;
  background: #fff; border: 1px solid #a6f4c5; border-radius: 5px; padding: 0 5px; color: #05603a; }
.sent-note { font-size: 11.5px; color: #5b6472; }
.divider { align-self: center; font-size: 12px; color: #667085; }
.alert { margin: 8px 12px 0; padding: 8px 10px 8px 12px; background: #fef3f2; border: 1px solid #fecdca;
  color: #912018; border-radius: 10px; font-size: 13.5px; display: flex; gap: 8px; align-items: flex-start; flex: none; }
.alert p { margin: 0; flex: 1; }
.alert .row { align-items: center; }
.alert .linkish { color: #912018; }
.resolved { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; padding: 8px 12px;
  border-top: 1px solid #e3e6eb; font-size: 13.5px; background: #fff; flex: none; }
.resolved .q { font-weight: 600; margin-right: auto; }
form.composer { display: flex; gap: 8px; padding: 10px 12px 6px; border-top: 1px solid #e3e6eb;
  align-items: flex-end; flex: none; background: #fff; }
textarea { flex: 1; width: 100%; resize: none; font: inherit; font-size: 15px; line-height: 1.4; color: inherit;
  background: #fff; border: 1px solid #cfd4dc; border-radius: 12px; padding: 9px 12px; min-height: 42px; max-height: 132px; }
textarea:focus-visible { outline: 2px solid var(--cg-link); outline-offset: 0; border-color: transparent; }
.send { width: 42px; height: 42px; border-radius: 12px; border: 0; background: var(--cg-accent);
  color: var(--cg-on-accent); display: grid; place-items: center; flex: none; }
.send:disabled { opacity: .45; }
.foot { display: flex; justify-content: space-between; align-items: center; gap: 8px;
  padding: 0 12px 8px; font-size: 11.5px; color: #667085; background: #fff; flex: none; }
.typing { display: inline-flex; gap: 4px; padding: 4px 0; }
.typing i { width: 7px; height: 7px; border-radius: 50%; background: #98a2b3; animation: cg-dot 1.2s infinite both; }
.typing i:nth-child(2) { animation-delay: .15s; } .typing i:nth-child(3) { animation-delay: .3s; }
@keyframes cg-dot { 0%, 80%, 100% { opacity: .3; transform: translateY(0); } 40% { opacity: 1; transform: translateY(-3px); } }
.caret { display: inline-block; width: 7px; height: 1em; vertical-align: -2px; background: #98a2b3;
  margin-left: 2px; animation: cg-caret 1s steps(1) infinite; }
@keyframes cg-caret { 50% { opacity: 0; } }
@media (prefers-reduced-motion: reduce) { *, *::before, *::after { animation: none !important; transition: none !important; } }
@media (max-width: 520px) {
  .panel, .left .panel { inset: 0; width: auto; height: auto; min-height: 0; border-radius: 0; border: 0; }
  .open .launcher { display: none; }
  .msg { max-width: 94%; }
}
`;

  // ---------------------------------------------------------------- DOM
  const hostEl = document.createElement('div');
  hostEl.id = 'concierge-widget';
  hostEl.setAttribute('data-concierge', '');
  hostEl.style.setProperty('all', 'initial', 'important');
  hostEl.style.setProperty('display', 'block', 'important');
  const shadow = hostEl.attachShadow({ mode: 'open' });
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS_TEXT);
    shadow.adoptedStyleSheets = [sheet];
  } catch (_) {
    shadow.append(h('style', null, CSS_TEXT));
  }

  const rootEl = h('div', { class: 'root' + (cfg.position === 'left' ? ' left' : '') });
  rootEl.style.setProperty('--cg-accent', accent);
  rootEl.style.setProperty('--cg-on-accent', onAccent);
  rootEl.style.setProperty('--cg-link', linkColor);

  const badge = h('span', { class: 'badge', hidden: true, 'aria-hidden': 'true' });
  const launcher = h(
    'button',
    { class: 'launcher', type: 'button', 'aria-expanded': 'false', 'aria-controls': 'cg-panel', 'aria-label': `Open ${cfg.title} chat` },
    icon('chat', 28),
    badge
  );
  const subtitle = h('p', { class: 'sub', id: 'cg-sub' }, 'Ask us anything');
  const newBtn = h('button', { class: 'hbtn', type: 'button', 'aria-label': 'Start a new conversation', title: 'New conversation' }, icon('plus'));
  const closeBtn = h('button', { class: 'hbtn', type: 'button', 'aria-label': `Close ${cfg.title} chat`, title: 'Close (Esc)' }, icon('close'));
  const log = h('div', { class: 'log', id: 'cg-log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': 'Conversation', tabindex: '0' });
  const alertBox = h('div', { class: 'alert', role: 'alert', hidden: true });
  const resolvedBar = h('div', { class: 'resolved', role: 'group', 'aria-label': 'Did this solve it?', hidden: true });
  const input = h('textarea', {
    id: 'cg-input', rows: '1', maxlength: String(MAX_LEN), placeholder: 'Ask a question…',
    'aria-describedby': 'cg-hint', autocomplete: 'off', enterkeyhint: 'send',
  });
  const sendBtn = h('button', { class: 'send', type: 'submit', 'aria-label': 'Send message' }, icon('send'));
  const composer = h(
    'form',
    { class: 'composer', novalidate: true },
    h('label', { class: 'sr', for: 'cg-input' }, 'Your message'),
    h('span', { class: 'sr', id: 'cg-hint' }, 'Enter sends, Shift+Enter adds a line, Escape closes the chat.'),
    input,
    sendBtn
  );
  const handoffBtn = h('button', { class: 'linkish handoff', type: 'button' }, 'Talk to a person');
  const foot = h('div', { class: 'foot' }, handoffBtn, h('span', null, 'Powered by Concierge'));
  const panel = h(
    'section',
    { class: 'panel', id: 'cg-panel', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'cg-title', 'aria-describedby': 'cg-sub', hidden: true },
    h('header', null, h('div', { class: 'titles' }, h('h2', { id: 'cg-title' }, cfg.title), subtitle), newBtn, closeBtn),
    log,
    alertBox,
    resolvedBar,
    composer,
    foot
  );
  rootEl.append(panel, launcher);
  shadow.append(rootEl);

  // ---------------------------------------------------------------- state
  let identityKey = 'anon';
  let provider = null; // () => Promise<string|null>: the identity token for a new session
  let currentToken = null;
  let st = {}; // persisted per identity: session, conversation, answered prompts
  let gen = 0; // bumps on identity switch / reset; stale async results check it and bail out
  let isOpen = false;
  let busy = false;
  let abortCtl = null;
  let pollTimer = null;
  let sessionPromise = null;
  let unread = 0;
  let pendingFeedback = null;
  const rendered = new Map(); // message id -> element
  const shownCases = new Set();

  function load() {
    try {
      st = JSON.parse(localStorage.getItem(LS_PREFIX + identityKey) || '{}') || {};
    } catch (_) {
      st = {};
    }
    st.feedback = st.feedback || {};
  }
  function save() {
    try {
      localStorage.setItem(LS_PREFIX + identityKey, JSON.stringify(st));
    } catch (_) {
      /* private mode: the conversation just won't survive a reload */
    }
  }
  function snapshot() {
    return {
      conversationId: st.conversationId || null,
      customer: st.customer || null,
      anonymous: st.anonymous !== false && !st.customer,
      status: st.status || null,
      caseRef: st.caseRef || null,
      open: isOpen,
      busy,
      apiBase: API,
    };
  }

  // ---------------------------------------------------------------- HTTP
  async function rawFetch(path, o) {
    o = o || {};
    const headers = Object.assign({ Accept: 'application/json' }, o.headers || {});
    if (o.body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await fetch(API + path, {
        method: o.method || 'GET',
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        signal: o.signal,
        keepalive: !!o.keepalive,
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch (e) {
      if (e && e.name === 'AbortError') throw e;
      throw new WidgetError('network', "Couldn't reach support. Check your connection and try again.");
    }
  }
  async function toError(res) {
    let detail = '';
    try {
      detail = fmtDetail((await res.json()).detail);
    } catch (_) {
      /* not JSON */
    }
    const s = res.status;
    if (s === 429) {
      const raw = res.headers.get('Retry-After') || '';
      let secs = parseInt(raw, 10);
      if (!isFinite(secs) && raw) secs = Math.ceil((Date.parse(raw) - Date.now()) / 1000);
      secs = isFinite(secs) && secs > 0 ? secs : 5;
      const e = new WidgetError('rate_limited', `You're sending messages faster than we can answer. Please wait ${secs} s and try again.`, s, detail);
      e.retryAfter = secs;
      return e;
    }
    if (s === 413) return new WidgetError('too_large', 'That message is too long. Please shorten it and try again.', s, detail);
    if (s === 422) return new WidgetError('invalid', detail || 'That message could not be sent.', s, detail);
    if (s === 404) return new WidgetError('not_found', 'This conversation is no longer available.', s, detail);
    if (s === 401) return new WidgetError('unauthorized', 'Your session expired. Please try again.', s, detail);
    if (s === 503) return new WidgetError('unavailable', 'Support is starting up. Please try again in a moment.', s, detail);
    if (s >= 500) return new WidgetError('server', 'Something went wrong on our side. Please try again.', s, detail);
    return new WidgetError('http', detail || `Request failed (${s}).`, s, detail);
  }
  function sessionValid() {
    if (!st.sessionToken) return false;
    const exp = st.sessionExpiresAt ? Date.parse(st.sessionExpiresAt) : NaN;
    return !isFinite(exp) || exp - 30000 > Date.now();
  }
  function ensureSession() {
    if (sessionValid()) return Promise.resolve(st.sessionToken);
    if (!sessionPromise) {
      const p = createSession();
      sessionPromise = p;
      const clear = () => {
        if (sessionPromise === p) sessionPromise = null;
      };
      p.then(clear, clear);
    }
    return sessionPromise;
  }
  async function createSession() {
    const myGen = gen;
    let token = null;
    if (provider) {
      try {
        token = (await provider()) || null;
      } catch (_) {
        throw new WidgetError('identity', "We couldn't get your sign-in from this site. Refresh the page, or continue as a guest.");
      }
    }
    const res = await rawFetch('/v1/sessions', { method: 'POST', body: token ? { identityToken: token } : {} });
    if (!res.ok) {
      const err = await toError(res);
      if (res.status === 401) {
        err.kind = 'identity';
        err.message = "We couldn't verify your sign-in" + (err.detail ? ` (${err.detail})` : '') +
          '. Refresh the page to sign in again, or continue as a guest.';
      }
      throw err;
    }
    const body = await res.json();
    if (myGen !== gen) throw new WidgetError('stale', 'identity changed');
    st.tokenHash = token ? fnv(token) : null;
    st.sessionToken = body.sessionToken;
    st.sessionExpiresAt = body.expiresAt || null;
    st.customer = body.customer || null;
    st.anonymous = !!body.anonymous;
    save();
    updateHeader();
    emit('concierge:identity', { customer: st.customer, anonymous: st.anonymous });
    return st.sessionToken;
  }
  async function api(path, o) {
    o = o || {};
    const token = await ensureSession();
    const headers = Object.assign({ Authorization: 'Bearer ' + token }, o.headers || {});
    const res = await rawFetch(path, Object.assign({}, o, { headers }));
    if (res.status === 401 && !o.retried) {
      // Expired or revoked session: make a new one (same identity) and try once more.
      if (st.sessionToken === token) {
        st.sessionToken = null;
        save();
      }
      return api(path, Object.assign({}, o, { retried: true }));
    }
    if (!res.ok) throw await toError(res);
    return res;
  }
  async function ensureConversation() {
    if (st.conversationId) return st.conversationId;
    const myGen = gen;
    const res = await api('/v1/conversations', { method: 'POST', body: {} });
    const c = await res.json();
    if (myGen !== gen) throw new WidgetError('stale', 'identity changed');
    Object.assign(st, { conversationId: c.id, lastSeq: 0, status: c.status || 'open', caseRef: null, resolved: null, feedback: {} });
    save();
    return c.id;
  }
  function convPath(suffix) {
    return '/v1/conversations/' + enc(st.conversationId) + (suffix || '');
  }
  function forgetConversation(note) {
    Object.assign(st, { conversationId: null, lastSeq: 0, status: null, caseRef: null, resolved: null, feedback: {} });
    save();
    shownCases.clear();
    resolvedBar.hidden = true;
    if (note) log.append(h('p', { class: 'divider' }, note));
    updateHeader();
  }

  // ---------------------------------------------------------------- rendering
  // The log stays pinned to the newest message unless the reader has scrolled up; content
  // changes (streaming, sources, feedback forms) and size changes (prompt bars, errors,
  // keyboard on phones) keep it pinned.
  let pinned = true;
  function nearBottom() {
    return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  }
  function scrollDown(force) {
    if (force || pinned || nearBottom()) {
      log.scrollTop = log.scrollHeight;
      pinned = true;
    }
  }
  log.addEventListener('scroll', () => (pinned = nearBottom()), { passive: true });
  const keepPinned = () => {
    if (pinned) log.scrollTop = log.scrollHeight;
  };
  if (window.ResizeObserver) new ResizeObserver(keepPinned).observe(log);
  new MutationObserver(keepPinned).observe(log, { childList: true, subtree: true, characterData: true });
  function initials(name) {
    return (name || '?').split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0].toUpperCase()).join('');
  }
  function agentName(m) {
    const meta = m.meta || {};
    return meta.agent || meta.agentName || 'Support agent';
  }
  function greet() {
    log.replaceChildren(h('div', { class: 'msg greeting' }, h('span', { class: 'sr' }, cfg.title + ': '), h('div', { class: 'bubble' }, plain(cfg.greeting))));
  }
  function clearLog() {
    rendered.clear();
    shownCases.clear();
    greet();
  }

  function sourcesList(cites) {
    const list = h('ol');
    for (const c of cites.slice().sort((a, b) => a.n - b.n)) {
      const href = safeUrl(c.url);
      const title = c.title || (c.kind === 'ticket' ? 'Resolved ticket' : 'Article');
      list.append(
        h(
          'li',
          { value: String(c.n) },
          href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer', 'data-source': c.n }, title) : h('span', null, title),
          h('span', { class: 'kind' }, c.kind === 'ticket' ? 'Solved case' : 'Article'),
          c.breadcrumb && c.breadcrumb !== title ? h('span', { class: 'crumb' }, c.breadcrumb) : null
        )
      );
    }
    return h('div', { class: 'sources' }, h('h3', null, 'Sources'), list);
  }

  function fillMessage(el, m) {
    const meta = m.meta || {};
    el.className = 'msg ' + m.role;
    el.setAttribute('data-role', m.role);
    if (m.id) el.setAttribute('data-id', m.id);
    if (m.seq !== undefined && m.seq !== null) el.setAttribute('data-seq', String(m.seq));
    if (m.createdAt) el.title = new Date(m.createdAt).toLocaleString();
    el.replaceChildren();
    const who = m.role === 'user' ? 'You' : m.role === 'agent' ? agentName(m) : cfg.title;
    el.append(h('span', { class: 'sr' }, m.role === 'agent' ? `${who} (support team): ` : who + ': '));
    if (m.role === 'agent') {
      el.append(h('div', { class: 'who', 'aria-hidden': 'true' }, h('span', { class: 'avatar' }, initials(who)), who, h('span', { class: 'tag' }, '· Support team')));
    }
    const cites = Array.isArray(meta.citations) ? meta.citations : [];
    el.append(h('div', { class: 'bubble' }, m.role === 'user' ? plain(m.content) : rich(m.content, cites)));
    if (m.role === 'assistant') {
      if (cites.length) el.append(sourcesList(cites));
      if (m.id && !meta.escalated) el.append(feedbackRow(m));
    }
  }
  function renderMessage(m) {
    if (m.id && rendered.has(m.id)) return rendered.get(m.id);
    const el = h('div');
    fillMessage(el, m);
    const stick = nearBottom();
    log.append(el);
    if (m.id) rendered.set(m.id, el);
    if (m.seq) st.lastSeq = Math.max(st.lastSeq || 0, m.seq);
    if (m.meta && m.meta.escalated && m.meta.caseRef) showEscalation(m.meta.caseRef, m.meta.escalationReason);
    scrollDown(stick || m.role === 'user');
    return el;
  }
  function ingest(m, live) {
    if (!m || !m.id || rendered.has(m.id)) return;
    renderMessage(m);
    if (live && m.role === 'agent') {
      resolvedBar.hidden = true;
      if (!isOpen) {
        unread += 1;
        updateBadge();
      }
    }
  }
  function updateBadge() {
    badge.hidden = unread === 0;
    badge.textContent = unread > 9 ? '9+' : String(unread);
    launcher.setAttribute('aria-label', `Open ${cfg.title} chat` + (unread ? ` (${unread} new ${unread === 1 ? 'reply' : 'replies'})` : ''));
  }
  function updateHeader() {
    const escalated = st.status === 'escalated';
    if (escalated) subtitle.textContent = 'With our support team' + (st.caseRef ? ` · case ${st.caseRef}` : '');
    else if (st.customer && st.customer.name) subtitle.textContent = `Signed in as ${st.customer.name}`;
    else subtitle.textContent = 'Ask us anything';
    handoffBtn.disabled = escalated;
    handoffBtn.textContent = escalated ? 'A person has your case' : 'Talk to a person';
  }
  function setStatus(s) {
    if (!s || s === st.status) return;
    const was = st.status;
    st.status = s;
    save();
    if (was === 'escalated' && s !== 'escalated') {
      log.append(h('div', { class: 'notice muted', role: 'status' }, h('div', null, h('strong', null, 'Case closed'), h('p', null, 'Our team marked this case as resolved. Ask another question any time.'))));
      scrollDown();
    }
    updateHeader();
  }
  function showEscalation(caseRef, reason) {
    if (!caseRef || shownCases.has(caseRef)) return;
    shownCases.add(caseRef);
    const isNew = st.caseRef !== caseRef;
    st.caseRef = caseRef;
    if (st.status !== 'closed') st.status = 'escalated';
    save();
    resolvedBar.hidden = true;
    log.append(
      h(
        'div',
        { class: 'notice escalation', role: 'status', 'data-case-ref': caseRef },
        icon('person'),
        h(
          'div',
          null,
          h('strong', null, 'You’re being connected with a person'),
          h('p', null, 'Case reference ', h('span', { class: 'case' }, caseRef), '. Our support team will reply in this chat — you can close it and come back; nothing is lost.')
        )
      )
    );
    scrollDown(true);
    updateHeader();
    if (isNew) emit('concierge:escalated', { caseRef, reason: reason || null, conversationId: st.conversationId });
  }

  // ---------------------------------------------------------------- feedback
  function feedbackRow(m) {
    const prev = st.feedback ? st.feedback[m.id] : undefined;
    const up = h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Helpful', 'aria-pressed': prev === true ? 'true' : 'false', 'data-feedback': 'up' }, icon('up', 18));
    const down = h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Not helpful', 'aria-pressed': prev === false ? 'true' : 'false', 'data-feedback': 'down' }, icon('down', 18));
    const status = h('span', { class: 'fb-status', role: 'status' });
    const row = h('div', { class: 'fb', role: 'group', 'aria-label': 'Was this answer helpful?' }, h('span', { class: 'fb-q', 'aria-hidden': 'true' }, 'Helpful?'), up, down, status);
    const ctx = { id: m.id, row, up, down, status, form: null };
    if (prev !== undefined && prev !== null) {
      up.disabled = down.disabled = true;
      status.textContent = 'Thanks for the feedback.';
    }
    up.addEventListener('click', () => submitFeedback(ctx, true, null));
    down.addEventListener('click', () => askComment(ctx));
    return row;
  }
  function askComment(ctx) {
    if (ctx.form) return;
    flushFeedback();
    ctx.down.setAttribute('aria-pressed', 'true');
    ctx.up.disabled = ctx.down.disabled = true;
    const id = 'cg-fb-' + fnv(ctx.id);
    const ta = h('textarea', { id, rows: '2', maxlength: '1000', placeholder: 'Optional' });
    const form = h(
      'form',
      { class: 'fb-form', novalidate: true },
      h('label', { for: id }, 'Sorry about that. What was missing or wrong?'),
      ta,
      h('div', { class: 'row' }, h('button', { type: 'submit', class: 'btn primary' }, 'Send feedback'), h('button', { type: 'button', class: 'btn', 'data-skip': '' }, 'Skip'))
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      submitFeedback(ctx, false, ta.value.trim() || null);
    });
    form.querySelector('[data-skip]').addEventListener('click', () => submitFeedback(ctx, false, null));
    ta.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        submitFeedback(ctx, false, ta.value.trim() || null);
      }
    });
    ctx.form = form;
    ctx.textarea = ta;
    ctx.row.after(form);
    pendingFeedback = ctx;
    ta.focus();
    scrollDown();
  }
  function flushFeedback(keepalive) {
    // A thumbs-down whose comment box was left open is still a thumbs-down: send it as is.
    if (pendingFeedback) submitFeedback(pendingFeedback, false, (pendingFeedback.textarea && pendingFeedback.textarea.value.trim()) || null, keepalive);
  }
  async function submitFeedback(ctx, helpful, comment, keepalive) {
    if (pendingFeedback === ctx) pendingFeedback = null;
    const hadFocus = ctx.form && ctx.form.contains(shadow.activeElement);
    if (ctx.form) ctx.form.remove();
    ctx.form = null;
    ctx.up.disabled = ctx.down.disabled = true;
    ctx.up.setAttribute('aria-pressed', String(helpful));
    ctx.down.setAttribute('aria-pressed', String(!helpful));
    ctx.status.textContent = 'Sending…';
    if (hadFocus) input.focus();
    const body = { helpful };
    if (comment) body.comment = comment;
    const conv = st.conversationId;
    try {
      await api(convPath('/messages/' + enc(ctx.id) + '/feedback'), { method: 'POST', body, keepalive: !!keepalive });
      if (conv === st.conversationId) {
        st.feedback[ctx.id] = helpful;
        save();
      }
      ctx.status.textContent = 'Thanks for the feedback.';
    } catch (e) {
      ctx.status.textContent = "Couldn't send feedback.";
      ctx.up.disabled = ctx.down.disabled = false;
      ctx.up.setAttribute('aria-pressed', 'false');
      ctx.down.setAttribute('aria-pressed', 'false');
    }
  }
  function answered(m) {
    // "Did this solve it?" only follows a real answer: not a handoff, and not an honest
    // "I don't have enough information" (confidence none with no tool result).
    const meta = (m && m.meta) || {};
    if (meta.escalated) return false;
    const found = Array.isArray(meta.tools) && meta.tools.some((t) => t && t.found);
    return meta.confidence !== 'none' || found;
  }
  function askResolved() {
    if (!st.conversationId || st.resolved !== null && st.resolved !== undefined || st.status === 'escalated') {
      resolvedBar.hidden = true;
      return;
    }
    const yes = h('button', { type: 'button', class: 'btn', 'data-resolved': 'yes' }, 'Yes');
    const no = h('button', { type: 'button', class: 'btn', 'data-resolved': 'no' }, 'No');
    resolvedBar.replaceChildren(h('span', { class: 'q', id: 'cg-resolved-q' }, 'Did this solve it?'), yes, no);
    resolvedBar.setAttribute('aria-labelledby', 'cg-resolved-q');
    resolvedBar.hidden = false;
    yes.addEventListener('click', () => submitResolved(true));
    no.addEventListener('click', () => submitResolved(false));
  }
  async function submitResolved(value) {
    const buttons = resolvedBar.querySelectorAll('button');
    buttons.forEach((b) => (b.disabled = true));
    const conv = st.conversationId;
    try {
      await api(convPath('/feedback'), { method: 'POST', body: { resolved: value } });
    } catch (e) {
      buttons.forEach((b) => (b.disabled = false));
      showError(e, () => submitResolved(value));
      return;
    }
    if (conv !== st.conversationId) return;
    st.resolved = value;
    save();
    const msg = h('span', { class: 'q', role: 'status' }, value ? 'Great — glad that solved it. Thanks for letting us know!' : 'Sorry it didn’t. A person can take it from here.');
    resolvedBar.replaceChildren(msg);
    if (!value && st.status !== 'escalated') {
      const b = h('button', { type: 'button', class: 'btn primary' }, 'Talk to a person');
      b.addEventListener('click', handoff);
      resolvedBar.append(b);
      b.focus();
    } else {
      input.focus();
    }
  }

  // ---------------------------------------------------------------- errors
  let countdownTimer = null;
  function hideError() {
    clearInterval(countdownTimer);
    alertBox.hidden = true;
    alertBox.replaceChildren();
  }
  function showError(err, retry, extra) {
    hideError();
    const text = h('p', null, (err && err.message) || 'Something went wrong.');
    const row = h('div', { class: 'row' });
    if (retry) {
      const b = h('button', { type: 'button', class: 'linkish', 'data-retry': '' }, 'Try again');
      b.addEventListener('click', () => {
        hideError();
        retry();
      });
      if (err && err.retryAfter) {
        let left = err.retryAfter;
        b.disabled = true;
        b.textContent = `Try again (${left})`;
        countdownTimer = setInterval(() => {
          left -= 1;
          if (left <= 0) {
            clearInterval(countdownTimer);
            b.disabled = false;
            b.textContent = 'Try again';
          } else b.textContent = `Try again (${left})`;
        }, 1000);
      }
      row.append(b);
    }
    (extra || []).forEach((x) => row.append(x));
    const dismiss = h('button', { type: 'button', class: 'linkish', 'aria-label': 'Dismiss message' }, 'Dismiss');
    dismiss.addEventListener('click', () => {
      hideError();
      input.focus();
    });
    row.append(dismiss);
    alertBox.append(h('div', { style: null }, text, row));
    alertBox.hidden = false;
    emit('concierge:error', { kind: err && err.kind, message: err && err.message, status: err && err.status });
  }
  function identityError(e) {
    const guest = h('button', { type: 'button', class: 'linkish' }, 'Continue as guest');
    guest.addEventListener('click', () => {
      hideError();
      identify(null);
    });
    showError(e, () => ensureSession().then(() => st.conversationId && restore(), identityError), [guest]);
  }
  function handleError(e, retry) {
    if (!e || e.name === 'AbortError' || e.kind === 'stale') return;
    if (e.kind === 'identity') identityError(e);
    else showError(e, retry);
  }

  // ---------------------------------------------------------------- sending and streaming
  function setBusy(b) {
    busy = b;
    sendBtn.disabled = b;
    composer.setAttribute('aria-busy', String(b));
  }
  function attachUser(el, um) {
    if (!um || !um.id) return;
    el.setAttribute('data-id', um.id);
    if (um.seq !== undefined) el.setAttribute('data-seq', String(um.seq));
    rendered.set(um.id, el);
    if (um.seq) st.lastSeq = Math.max(st.lastSeq || 0, um.seq);
  }
  function startBubble() {
    const bubble = h('div', { class: 'bubble' }, h('span', { class: 'typing', role: 'img', 'aria-label': 'Typing' }, h('i'), h('i'), h('i')));
    const el = h('div', { class: 'msg assistant streaming', 'aria-busy': 'true' }, h('span', { class: 'sr' }, cfg.title + ': '), bubble);
    log.append(el);
    scrollDown(true);
    return { el, bubble, text: '', frame: 0 };
  }
  function paint(s) {
    if (s.frame) return;
    s.frame = requestAnimationFrame(() => {
      s.frame = 0;
      const stick = nearBottom();
      s.bubble.replaceChildren(rich(s.text, []));
      const last = s.bubble.lastElementChild || s.bubble;
      last.append(h('span', { class: 'caret', 'aria-hidden': 'true' }));
      scrollDown(stick);
    });
  }
  function finishBubble(s, message) {
    if (s.frame) cancelAnimationFrame(s.frame);
    const stick = nearBottom();
    s.el.classList.remove('streaming');
    s.el.removeAttribute('aria-busy');
    fillMessage(s.el, message);
    if (message.id) rendered.set(message.id, s.el);
    if (message.seq) st.lastSeq = Math.max(st.lastSeq || 0, message.seq);
    save();
    const meta = message.meta || {};
    if (meta.escalated && meta.caseRef) showEscalation(meta.caseRef, meta.escalationReason);
    scrollDown(stick);
  }
  function silentNote(userEl) {
    // The conversation is with a person: the bot stays silent and the message waits for them.
    userEl.append(h('span', { class: 'sent-note' }, 'Sent to our support team'));
  }

  // Server-Sent Events over fetch (EventSource cannot POST): split on blank lines, read
  // `event:` and `data:` fields, ignore comments. Returns the unconsumed tail.
  function drainEvents(buf, handle) {
    let hold = '';
    if (buf.endsWith('\r')) {
      hold = '\r';
      buf = buf.slice(0, -1);
    }
    buf = buf.replace(/\r\n?/g, '\n');
    let i;
    while ((i = buf.indexOf('\n\n')) !== -1) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = 'message';
      const dataLines = [];
      for (const line of block.split('\n')) {
        if (!line || line[0] === ':') continue;
        const c = line.indexOf(':');
        const field = c === -1 ? line : line.slice(0, c);
        let value = c === -1 ? '' : line.slice(c + 1);
        if (value[0] === ' ') value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') dataLines.push(value);
      }
      if (dataLines.length) handle(event, dataLines.join('\n'));
    }
    return buf + hold;
  }

  async function consumeStream(res, userEl, question, myGen) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let meta = null;
    let message = null;
    let finished = false;
    let s = null;
    const handle = (event, raw) => {
      if (myGen !== gen) throw new WidgetError('stale', 'identity changed');
      let d;
      try {
        d = JSON.parse(raw);
      } catch (_) {
        d = { text: raw };
      }
      if (event === 'meta') {
        // the first meta arrives as soon as the message is stored; the analysis follows in a second
        meta = Object.assign({}, meta || {}, d);
        attachUser(userEl, d.userMessage);
        if (!s) s = startBubble();
        emit('concierge:meta', { meta, question, conversationId: st.conversationId, customer: st.customer || null });
      } else if (event === 'delta') {
        if (!s) s = startBubble();
        s.text += d.text || '';
        paint(s);
      } else if (event === 'done') {
        finished = true;
        message = d.message || null;
        if (message) {
          if (!s) s = startBubble();
          finishBubble(s, message);
        } else {
          if (s) s.el.remove();
          silentNote(userEl);
        }
        s = null;
      } else if (event === 'error') {
        throw new WidgetError('stream', 'Sorry — something went wrong while answering' + (d.detail ? ` (${d.detail})` : '') + '. Please try again.');
      }
    };
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buf = drainEvents(buf + decoder.decode(chunk.value, { stream: true }), handle);
      }
      drainEvents(buf + decoder.decode() + '\n\n', handle);
    } catch (e) {
      if (s) s.el.remove();
      try {
        reader.cancel();
      } catch (_) {
        /* already closed */
      }
      throw e;
    }
    if (!finished) {
      if (s) s.el.remove();
      // The server finishes and stores the turn even when the stream drops: poll for it.
      setTimeout(pollOnce, 1500);
      throw new WidgetError('interrupted', 'The reply was interrupted. It will appear here as soon as it is ready.');
    }
    return { meta, message };
  }

  async function deliver(text, userEl, myGen, retried) {
    await ensureConversation();
    let res;
    try {
      res = await api(convPath('/messages'), {
        method: 'POST',
        body: { content: text },
        headers: { Accept: 'text/event-stream' },
        signal: abortCtl && abortCtl.signal,
      });
    } catch (e) {
      if (e.kind === 'not_found' && !retried && myGen === gen) {
        // The stored conversation is gone (expired, or an anonymous session was renewed).
        forgetConversation('Earlier messages are no longer available — new conversation');
        log.append(userEl);
        return deliver(text, userEl, myGen, true);
      }
      throw e;
    }
    if (myGen !== gen) throw new WidgetError('stale', 'identity changed');
    const ctype = res.headers.get('content-type') || '';
    if (ctype.includes('text/event-stream') && res.body) return consumeStream(res, userEl, text, myGen);
    const body = await res.json();
    attachUser(userEl, body.userMessage);
    const reply = body.reply || null;
    if (reply) renderMessage(reply);
    else silentNote(userEl);
    return { meta: reply ? reply.meta : null, message: reply };
  }

  async function send(text) {
    text = String(text === undefined || text === null ? '' : text).trim();
    if (!text) return null;
    if (busy) {
      showError(new WidgetError('busy', 'Please wait for the current reply to finish.'));
      return null;
    }
    if (text.length > MAX_LEN) {
      showError(new WidgetError('too_large', `That message is too long (${text.length} characters; the limit is ${MAX_LEN}).`));
      return null;
    }
    flushFeedback();
    hideError();
    resolvedBar.hidden = true;
    setBusy(true);
    const myGen = gen;
    abortCtl = new AbortController();
    const userEl = renderMessage({ role: 'user', content: text });
    userEl.classList.add('pending');
    try {
      const turn = await deliver(text, userEl, myGen, false);
      if (myGen !== gen) return null;
      save();
      if (turn.message) {
        emit('concierge:turn', { meta: turn.meta || turn.message.meta || null, message: turn.message, question: text, conversationId: st.conversationId, customer: st.customer || null });
        if (answered(turn.message)) askResolved();
      }
      return turn;
    } catch (e) {
      if (myGen !== gen || (e && (e.name === 'AbortError' || e.kind === 'stale'))) return null;
      if (e.kind !== 'interrupted') userEl.classList.add('failed');
      const retryable = !['too_large', 'invalid', 'interrupted'].includes(e.kind);
      handleError(e, retryable ? () => {
        userEl.remove();
        send(text);
      } : null);
      return null;
    } finally {
      userEl.classList.remove('pending');
      if (myGen === gen) {
        setBusy(false);
        schedulePoll();
      }
    }
  }

  async function handoff() {
    if (busy) return;
    flushFeedback();
    hideError();
    setBusy(true);
    // The button disables itself; keep keyboard focus inside the panel (Esc, typing).
    if (isOpen) input.focus();
    handoffBtn.disabled = true;
    const myGen = gen;
    try {
      await ensureConversation();
      let res;
      try {
        res = await api(convPath('/handoff'), { method: 'POST', body: {} });
      } catch (e) {
        if (e.kind !== 'not_found') throw e;
        forgetConversation();
        await ensureConversation();
        res = await api(convPath('/handoff'), { method: 'POST', body: {} });
      }
      const body = await res.json();
      if (myGen !== gen) return;
      if (body.message) ingest(body.message, false);
      showEscalation(body.caseRef, 'explicit');
      save();
    } catch (e) {
      if (myGen === gen) handleError(e, handoff);
    } finally {
      if (myGen === gen) {
        setBusy(false);
        updateHeader();
        schedulePoll();
      }
    }
  }

  // ---------------------------------------------------------------- history and polling
  async function restore() {
    if (!st.conversationId) return;
    const myGen = gen;
    try {
      const res = await api(convPath());
      const c = await res.json();
      if (myGen !== gen) return;
      clearLog();
      const msgs = c.messages || [];
      msgs.forEach((m) => ingest(m, false));
      if (c.status) {
        st.status = c.status;
        save();
      }
      updateHeader();
      const last = msgs[msgs.length - 1];
      if (last && last.role === 'assistant' && answered(last)) askResolved();
      scrollDown(true);
      emit('concierge:history', { messages: msgs, conversationId: st.conversationId, customer: st.customer || null });
    } catch (e) {
      if (myGen !== gen) return;
      if (e.kind === 'not_found') {
        forgetConversation();
        clearLog();
      } else handleError(e, restore);
    }
  }
  async function pollOnce() {
    if (busy || !st.conversationId || !st.sessionToken) return;
    const myGen = gen;
    try {
      const res = await api(convPath('/messages?after=' + (st.lastSeq || 0)));
      const body = await res.json();
      if (myGen !== gen || busy) return;
      (body.messages || []).forEach((m) => ingest(m, true));
      save();
      setStatus(body.status);
    } catch (e) {
      if (myGen === gen && e.kind === 'not_found') forgetConversation();
      // Other polling failures are transient; the next tick tries again.
    }
  }
  function schedulePoll() {
    clearTimeout(pollTimer);
    if (!st.conversationId) return;
    let ms = isOpen ? POLL_OPEN_MS : st.status === 'escalated' ? POLL_BACKGROUND_MS : 0;
    if (!ms) return;
    if (document.hidden) ms = Math.max(ms, POLL_BACKGROUND_MS);
    const myGen = gen;
    pollTimer = setTimeout(async () => {
      await pollOnce();
      if (myGen === gen) schedulePoll();
    }, ms);
  }

  // ---------------------------------------------------------------- open / close / identity
  function open() {
    if (isOpen) return;
    isOpen = true;
    panel.hidden = false;
    rootEl.classList.add('open');
    launcher.setAttribute('aria-expanded', 'true');
    unread = 0;
    updateBadge();
    input.focus({ preventScroll: true });
    scrollDown(true);
    if (st.conversationId && rendered.size === 0) restore();
    else if (st.conversationId) pollOnce();
    schedulePoll();
    emit('concierge:open', {});
  }
  function close() {
    if (!isOpen) return;
    flushFeedback();
    const hadFocus = panel.contains(shadow.activeElement);
    isOpen = false;
    panel.hidden = true;
    rootEl.classList.remove('open');
    launcher.setAttribute('aria-expanded', 'false');
    if (hadFocus) launcher.focus();
    schedulePoll();
    emit('concierge:close', {});
  }
  function toggle() {
    if (isOpen) close();
    else open();
  }
  function switchTo(key) {
    gen += 1;
    if (abortCtl) abortCtl.abort();
    clearTimeout(pollTimer);
    sessionPromise = null;
    pendingFeedback = null;
    setBusy(false);
    identityKey = key;
    load();
    unread = 0;
    updateBadge();
    hideError();
    resolvedBar.hidden = true;
    clearLog();
    updateHeader();
  }
  function dropSessionIfTokenChanged(token) {
    // State is keyed by the token's (unverified) `sub`; a session is only reused for the very
    // token that created it, so any other token is verified by the server before it counts.
    if (token && st.tokenHash !== fnv(token) && st.sessionToken) {
      st.sessionToken = null;
      st.sessionExpiresAt = null;
      st.customer = null;
      save();
    }
  }
  async function identify(tokenOrFn) {
    flushFeedback();
    let token = null;
    let prov = null;
    if (typeof tokenOrFn === 'function') {
      try {
        token = (await tokenOrFn()) || null;
      } catch (_) {
        token = null;
      }
      if (token) prov = async () => (await tokenOrFn()) || token;
    } else if (tokenOrFn) {
      token = String(tokenOrFn);
      prov = () => Promise.resolve(token);
    }
    const key = identityKeyFor(token);
    const same = key === identityKey && token === currentToken;
    provider = prov;
    currentToken = token;
    if (same) return snapshot();
    switchTo(key);
    dropSessionIfTokenChanged(token);
    const myGen = gen;
    try {
      if (token || st.conversationId) await ensureSession();
      if (myGen === gen && st.conversationId) await restore();
    } catch (e) {
      if (myGen === gen) handleError(e, null);
    }
    if (myGen === gen) schedulePoll();
    return snapshot();
  }
  function reset() {
    flushFeedback();
    gen += 1;
    if (abortCtl) abortCtl.abort();
    clearTimeout(pollTimer);
    setBusy(false);
    forgetConversation();
    hideError();
    clearLog();
    input.focus();
  }

  // ---------------------------------------------------------------- events
  launcher.addEventListener('click', toggle);
  closeBtn.addEventListener('click', close);
  newBtn.addEventListener('click', reset);
  handoffBtn.addEventListener('click', handoff);
  composer.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value;
    if (!text.trim() || busy) return;
    input.value = '';
    autosize();
    send(text);
  });
  function autosize() {
    input.style.height = 'auto';
    input.style.height = Math.min(input.scrollHeight + 2, 132) + 'px';
  }
  input.addEventListener('input', autosize);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      composer.requestSubmit ? composer.requestSubmit() : composer.dispatchEvent(new Event('submit', { cancelable: true }));
    }
  });
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      close();
    }
  });
  document.addEventListener('visibilitychange', schedulePoll);
  window.addEventListener('pagehide', () => flushFeedback(true));
  window.addEventListener('storage', (e) => {
    // Another tab of the same site changed this identity's state (e.g. started a new chat).
    if (e.key === LS_PREFIX + identityKey && !busy) {
      const before = st.conversationId;
      load();
      if (st.conversationId !== before) {
        clearLog();
        if (st.conversationId && isOpen) restore();
      }
    }
  });

  // ---------------------------------------------------------------- boot
  window.Concierge = {
    __widget: true,
    version: '1.0.0',
    open,
    close,
    toggle,
    reset,
    identify,
    send: (text) => {
      open();
      return send(text);
    },
    get state() {
      return snapshot();
    },
  };
  function boot() {
    document.body.append(hostEl);
    const initial = (data.identityToken || '').trim() || null;
    currentToken = initial;
    provider = initial ? () => Promise.resolve(initial) : null;
    identityKey = identityKeyFor(initial);
    load();
    dropSessionIfTokenChanged(initial);
    clearLog();
    updateHeader();
    if (st.conversationId) {
      // Restore in the background so agent replies that arrived while away show as unread.
      const myGen = gen;
      restore().then(() => myGen === gen && schedulePoll());
    }
    if (cfg.startOpen) open();
    emit('concierge:ready', { apiBase: API });
  }
  if (document.body) boot();
  else document.addEventListener('DOMContentLoaded', boot, { once: true });
})();
