/*! Concierge support widget — one <script> tag, no build step, no dependencies.
 *
 * The embed, every data-* attribute, the host API (window.Concierge), its events, the CSP and
 * CORS lines a host needs and the identity token's claims are documented in the README
 * ("Embed it"). In short:
 *
 *   <script src="https://support.example.com/widget.js?v=2" defer data-title="Acme Support"></script>
 *   Concierge('boot', { identity: () => fetch('/me/concierge-token').then((r) => r.text()) });
 *
 * Calls made before this file loads are queued by the host's one-line stub
 * (window.Concierge = window.Concierge || function () { (Concierge.q = Concierge.q || []).push(arguments) })
 * and replayed in order. Events carry only a minimal public payload (ids, counts, case
 * references); the per-turn trace is never broadcast unless the page opts in with data-inspect.
 *
 * The conversation id and session token are kept in localStorage, keyed by API base and by
 * identity (the JWT `sub`, or "anon"); signing out (identify(null) from a customer, reset(),
 * shutdown()) removes the customer's session locally and revokes it on the server.
 * No innerHTML anywhere: the widget loads on pages that enforce Trusted Types.
 */
(function () {
  'use strict';
  if (window.Concierge && window.Concierge.__widget) return;
  const VERSION = '2.0.0';

  // ---------------------------------------------------------------- configuration
  const script =
    document.currentScript ||
    Array.from(document.scripts).find((s) => /\/widget(?:\.[\w.-]+)?\.js(?:[?#]|$)/.test(s.src)) ||
    null;
  const data = (script && script.dataset) || {};
  const scriptOrigin = script && script.src ? new URL(script.src, location.href).origin : location.origin;
  const API = (data.api && data.api.trim() ? new URL(data.api.trim(), location.href).href : scriptOrigin)
    .replace(/\/+$/, '');

  function num(v, dflt) {
    const n = parseInt(v, 10);
    return isFinite(n) ? n : dflt;
  }
  const cfg = {
    title: (data.title || 'Support').trim(),
    greeting: data.greeting || null, // null: the localized default
    position: data.position === 'left' ? 'left' : 'right',
    startOpen: data.open === 'true',
    locale: data.locale || null, // the host's choice beats the customer's and the page's
    hideLauncher: data.hideLauncher === 'true',
    launcher: data.launcher || null, // CSS selector of the host's own launcher element(s)
    offsetX: num(data.offsetX, 20),
    offsetY: num(data.offsetY, 20),
    zIndex: num(data.zIndex, 2147483000),
    timeoutMs: num(data.timeout, 15000), // a request the server never answers fails after this
    accent: data.accent || '#0b5fff',
    inspect: data.inspect === 'true', // the demo console: broadcast each turn's full trace
  };
  const POLL_OPEN_MS = 3000;
  const POLL_BACKGROUND_MS = 15000;
  const POLL_MAX_MS = 60000; // a dead server is asked less and less often, down to once a minute
  const STREAM_IDLE_MS = 45000; // silence inside a reply stream (the server pings every 15 s)
  const MAX_LEN = 4000;
  const LS_PREFIX = 'concierge:v1:' + API + ':';

  // ---------------------------------------------------------------- languages
  // Labels in every language the widget ships; a customer's, a page's or the host's locale
  // picks one ("de-AT" → "de"), anything else is English.
  const STRINGS = {
    en: {
      openChat: 'Open {title} chat', newReplies: '{n} new replies', newReply: '1 new reply',
      askAnything: 'Ask us anything', signedInAs: 'Signed in as {name}',
      withTeam: 'With our support team', caseSuffix: ' · case {ref}',
      newConversation: 'New conversation', startNew: 'Start a new conversation',
      closeChat: 'Close {title} chat', closeEsc: 'Close (Esc)', conversation: 'Conversation',
      yourMessage: 'Your message', hint: 'Enter sends, Shift+Enter adds a line, Escape closes the chat.',
      placeholder: 'Ask a question…', send: 'Send message', talkToPerson: 'Talk to a person',
      personHasCase: 'A person has your case', poweredBy: 'Powered by Concierge',
      greeting: 'Hi! Ask me anything — I answer from our help center and can look up your orders and subscription. You can reach a person at any time.',
      you: 'You', agent: 'Support agent', teamTag: '· Support team', teamSuffix: ' (support team)',
      sources: 'Sources', solvedCase: 'Solved case', article: 'Article', resolvedTicket: 'Resolved ticket',
      sourceN: 'Source {n}: {title}', helpfulQ: 'Helpful?', helpful: 'Helpful', notHelpful: 'Not helpful',
      wasHelpful: 'Was this answer helpful?', thanksFeedback: 'Thanks for the feedback.', sending: 'Sending…',
      feedbackFailed: "Couldn't send feedback.", whatWasWrong: 'Sorry about that. What was missing or wrong?',
      optional: 'Optional', sendFeedback: 'Send feedback', skip: 'Skip',
      didThisSolve: 'Did this solve it?', yes: 'Yes', no: 'No',
      glad: 'Great — glad that solved it. Thanks for letting us know!',
      sorryDidnt: 'Sorry it didn’t. A person can take it from here.',
      caseClosed: 'Case closed', caseClosedBody: 'Our team marked this case as resolved. Ask another question any time.',
      connecting: 'You’re being connected with a person', caseRef: 'Case reference ',
      caseRefAfter: '. Our support team will reply in this chat — you can close it and come back; nothing is lost.',
      sentToTeam: 'Sent to our support team', typing: 'Typing', tryAgain: 'Try again', tryAgainN: 'Try again ({n})',
      dismiss: 'Dismiss', dismissMsg: 'Dismiss message', continueGuest: 'Continue as guest',
      counter: '{n} / {max}', tooLongBy: '{n} characters over the limit',
      errNetwork: "Couldn't reach support. Check your connection and try again.",
      errTimeout: 'Support is taking too long to answer. Please try again.',
      errRate: "You're sending messages faster than we can answer. Please wait {secs} s and try again.",
      errTooLarge: 'That message is too long. Please shorten it and try again.',
      errTooLong: 'That message is too long ({n} characters; the limit is {max}). Shorten it or split it in two.',
      errNotFound: 'This conversation is no longer available.', errSession: 'Your session expired. Please try again.',
      errStarting: 'Support is starting up. Please try again in a moment.',
      errServer: 'Something went wrong on our side. Please try again.', errHttp: 'Request failed ({s}).',
      errInvalid: 'That message could not be sent.', errBusy: 'Please wait for the current reply to finish.',
      errStream: 'Sorry — something went wrong while answering. Please try again.',
      errInterrupted: 'The reply was interrupted. It will appear here as soon as it is ready.',
      errIdentityGet: "We couldn't get your sign-in from this site. Refresh the page, or continue as a guest.",
      errIdentity: "We couldn't verify your sign-in ({detail}). Refresh the page to sign in again, or continue as a guest.",
      earlierGone: 'Earlier messages are no longer available — new conversation',
      offline: "You're offline. We'll reconnect as soon as you're back.",
    },
    de: {
      openChat: '{title}-Chat öffnen', newReplies: '{n} neue Antworten', newReply: '1 neue Antwort',
      askAnything: 'Fragen Sie uns alles', signedInAs: 'Angemeldet als {name}',
      withTeam: 'Bei unserem Support-Team', caseSuffix: ' · Fall {ref}',
      newConversation: 'Neues Gespräch', startNew: 'Neues Gespräch beginnen',
      closeChat: '{title}-Chat schließen', closeEsc: 'Schließen (Esc)', conversation: 'Gespräch',
      yourMessage: 'Ihre Nachricht', hint: 'Eingabetaste sendet, Umschalt+Eingabe fügt eine Zeile ein, Escape schließt den Chat.',
      placeholder: 'Stellen Sie eine Frage…', send: 'Nachricht senden', talkToPerson: 'Mit einem Menschen sprechen',
      personHasCase: 'Ein Mitarbeiter kümmert sich', poweredBy: 'Bereitgestellt von Concierge',
      greeting: 'Hallo! Fragen Sie mich alles — ich antworte aus unserem Hilfe-Center und kann Ihre Bestellungen und Ihr Abo nachsehen. Sie können jederzeit mit einem Menschen sprechen.',
      you: 'Sie', agent: 'Support-Mitarbeiter', teamTag: '· Support-Team', teamSuffix: ' (Support-Team)',
      sources: 'Quellen', solvedCase: 'Gelöster Fall', article: 'Artikel', resolvedTicket: 'Gelöstes Ticket',
      sourceN: 'Quelle {n}: {title}', helpfulQ: 'Hilfreich?', helpful: 'Hilfreich', notHelpful: 'Nicht hilfreich',
      wasHelpful: 'War diese Antwort hilfreich?', thanksFeedback: 'Danke für Ihr Feedback.', sending: 'Wird gesendet…',
      feedbackFailed: 'Feedback konnte nicht gesendet werden.', whatWasWrong: 'Das tut uns leid. Was hat gefehlt oder war falsch?',
      optional: 'Optional', sendFeedback: 'Feedback senden', skip: 'Überspringen',
      didThisSolve: 'Hat das Ihr Problem gelöst?', yes: 'Ja', no: 'Nein',
      glad: 'Prima — schön, dass es geklappt hat. Danke für die Rückmeldung!',
      sorryDidnt: 'Das tut uns leid. Ein Mensch kann hier übernehmen.',
      caseClosed: 'Fall abgeschlossen', caseClosedBody: 'Unser Team hat diesen Fall als gelöst markiert. Sie können jederzeit eine neue Frage stellen.',
      connecting: 'Wir verbinden Sie mit einem Menschen', caseRef: 'Fallnummer ',
      caseRefAfter: '. Unser Support-Team antwortet in diesem Chat — Sie können ihn schließen und später zurückkommen; nichts geht verloren.',
      sentToTeam: 'An unser Support-Team gesendet', typing: 'Schreibt', tryAgain: 'Erneut versuchen', tryAgainN: 'Erneut versuchen ({n})',
      dismiss: 'Ausblenden', dismissMsg: 'Meldung ausblenden', continueGuest: 'Als Gast fortfahren',
      counter: '{n} / {max}', tooLongBy: '{n} Zeichen über dem Limit',
      errNetwork: 'Der Support ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
      errTimeout: 'Der Support antwortet gerade nicht. Bitte versuchen Sie es erneut.',
      errRate: 'Sie senden schneller, als wir antworten können. Bitte warten Sie {secs} s und versuchen Sie es erneut.',
      errTooLarge: 'Diese Nachricht ist zu lang. Bitte kürzen Sie sie und versuchen Sie es erneut.',
      errTooLong: 'Diese Nachricht ist zu lang ({n} Zeichen; erlaubt sind {max}). Kürzen Sie sie oder teilen Sie sie auf.',
      errNotFound: 'Dieses Gespräch ist nicht mehr verfügbar.', errSession: 'Ihre Sitzung ist abgelaufen. Bitte versuchen Sie es erneut.',
      errStarting: 'Der Support startet gerade. Bitte versuchen Sie es gleich noch einmal.',
      errServer: 'Bei uns ist etwas schiefgelaufen. Bitte versuchen Sie es erneut.', errHttp: 'Anfrage fehlgeschlagen ({s}).',
      errInvalid: 'Diese Nachricht konnte nicht gesendet werden.', errBusy: 'Bitte warten Sie, bis die aktuelle Antwort fertig ist.',
      errStream: 'Beim Antworten ist etwas schiefgelaufen. Bitte versuchen Sie es erneut.',
      errInterrupted: 'Die Antwort wurde unterbrochen. Sie erscheint hier, sobald sie fertig ist.',
      errIdentityGet: 'Ihre Anmeldung konnte von dieser Seite nicht übernommen werden. Laden Sie die Seite neu oder fahren Sie als Gast fort.',
      errIdentity: 'Ihre Anmeldung konnte nicht bestätigt werden ({detail}). Laden Sie die Seite neu, um sich erneut anzumelden, oder fahren Sie als Gast fort.',
      earlierGone: 'Frühere Nachrichten sind nicht mehr verfügbar — neues Gespräch',
      offline: 'Sie sind offline. Wir verbinden neu, sobald Sie wieder online sind.',
    },
    fr: {
      openChat: 'Ouvrir le chat {title}', newReplies: '{n} nouvelles réponses', newReply: '1 nouvelle réponse',
      askAnything: 'Posez-nous vos questions', signedInAs: 'Connecté en tant que {name}',
      withTeam: 'Avec notre équipe support', caseSuffix: ' · dossier {ref}',
      newConversation: 'Nouvelle conversation', startNew: 'Commencer une nouvelle conversation',
      closeChat: 'Fermer le chat {title}', closeEsc: 'Fermer (Échap)', conversation: 'Conversation',
      yourMessage: 'Votre message', hint: 'Entrée envoie, Maj+Entrée ajoute une ligne, Échap ferme le chat.',
      placeholder: 'Posez une question…', send: 'Envoyer le message', talkToPerson: 'Parler à une personne',
      personHasCase: 'Une personne suit votre dossier', poweredBy: 'Propulsé par Concierge',
      greeting: 'Bonjour ! Posez-moi vos questions — je réponds à partir de notre centre d’aide et je peux consulter vos commandes et votre abonnement. Vous pouvez joindre une personne à tout moment.',
      you: 'Vous', agent: 'Agent du support', teamTag: '· Équipe support', teamSuffix: ' (équipe support)',
      sources: 'Sources', solvedCase: 'Cas résolu', article: 'Article', resolvedTicket: 'Ticket résolu',
      sourceN: 'Source {n} : {title}', helpfulQ: 'Utile ?', helpful: 'Utile', notHelpful: 'Pas utile',
      wasHelpful: 'Cette réponse vous a-t-elle aidé ?', thanksFeedback: 'Merci pour votre avis.', sending: 'Envoi…',
      feedbackFailed: 'Impossible d’envoyer votre avis.', whatWasWrong: 'Désolé. Qu’est-ce qui manquait ou était faux ?',
      optional: 'Facultatif', sendFeedback: 'Envoyer l’avis', skip: 'Passer',
      didThisSolve: 'Cela a-t-il résolu votre problème ?', yes: 'Oui', no: 'Non',
      glad: 'Parfait — ravi que ce soit résolu. Merci de nous l’avoir dit !',
      sorryDidnt: 'Désolé. Une personne peut prendre le relais.',
      caseClosed: 'Dossier clos', caseClosedBody: 'Notre équipe a marqué ce dossier comme résolu. Posez une autre question quand vous voulez.',
      connecting: 'Nous vous mettons en relation avec une personne', caseRef: 'Référence du dossier ',
      caseRefAfter: '. Notre équipe support répondra dans ce chat — vous pouvez le fermer et revenir ; rien n’est perdu.',
      sentToTeam: 'Envoyé à notre équipe support', typing: 'En train d’écrire', tryAgain: 'Réessayer', tryAgainN: 'Réessayer ({n})',
      dismiss: 'Masquer', dismissMsg: 'Masquer le message', continueGuest: 'Continuer en tant qu’invité',
      counter: '{n} / {max}', tooLongBy: '{n} caractères de trop',
      errNetwork: 'Impossible de joindre le support. Vérifiez votre connexion et réessayez.',
      errTimeout: 'Le support met trop de temps à répondre. Veuillez réessayer.',
      errRate: 'Vous envoyez des messages plus vite que nous ne pouvons répondre. Attendez {secs} s puis réessayez.',
      errTooLarge: 'Ce message est trop long. Raccourcissez-le puis réessayez.',
      errTooLong: 'Ce message est trop long ({n} caractères ; la limite est de {max}). Raccourcissez-le ou coupez-le en deux.',
      errNotFound: 'Cette conversation n’est plus disponible.', errSession: 'Votre session a expiré. Veuillez réessayer.',
      errStarting: 'Le support démarre. Réessayez dans un instant.',
      errServer: 'Un problème est survenu de notre côté. Veuillez réessayer.', errHttp: 'La requête a échoué ({s}).',
      errInvalid: 'Ce message n’a pas pu être envoyé.', errBusy: 'Veuillez attendre la fin de la réponse en cours.',
      errStream: 'Désolé — un problème est survenu pendant la réponse. Veuillez réessayer.',
      errInterrupted: 'La réponse a été interrompue. Elle apparaîtra ici dès qu’elle sera prête.',
      errIdentityGet: 'Impossible de récupérer votre connexion sur ce site. Rechargez la page ou continuez en tant qu’invité.',
      errIdentity: 'Impossible de vérifier votre connexion ({detail}). Rechargez la page pour vous reconnecter, ou continuez en tant qu’invité.',
      earlierGone: 'Les messages précédents ne sont plus disponibles — nouvelle conversation',
      offline: 'Vous êtes hors ligne. Nous nous reconnecterons dès votre retour.',
    },
  };
  const LANGS = Object.keys(STRINGS);
  function langOf(tag) {
    const base = String(tag || '').trim().toLowerCase().split(/[-_]/)[0];
    return LANGS.includes(base) ? base : null;
  }
  let lang = 'en';
  function chooseLang(customerLocale) {
    return (
      langOf(cfg.locale) ||
      langOf(customerLocale) ||
      langOf(document.documentElement.lang) ||
      langOf(navigator.language) ||
      'en'
    );
  }
  function t(key, vars) {
    const s = (STRINGS[lang] && STRINGS[lang][key]) || STRINGS.en[key] || key;
    return vars ? s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : s;
  }

  // ---------------------------------------------------------------- small utilities
  // Any CSS colour syntax (names, rgb(), hsl(), oklch(), #rgba) → sRGB over white, by
  // painting one pixel; the canvas resolves it exactly as the browser would.
  function rgbOf(v) {
    if (!v || !(window.CSS && CSS.supports('color', v))) return null;
    try {
      const c = document.createElement('canvas');
      c.width = c.height = 1;
      const x = c.getContext('2d', { willReadFrequently: true });
      x.fillStyle = v;
      x.fillRect(0, 0, 1, 1);
      const d = x.getImageData(0, 0, 1, 1).data;
      const a = d[3] / 255;
      return [0, 1, 2].map((i) => d[i] * a + 255 * (1 - a));
    } catch (_) {
      return null;
    }
  }
  function luminance(rgb) {
    const [r, g, b] = rgb
      .map((c) => c / 255)
      .map((c) => (c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4)));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  function contrast(l1, l2) {
    return (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
  }
  const DARK_TEXT = '#111827';
  const DARK_L = luminance([17, 24, 39]);
  // Text on the accent is whichever of white and near-black contrasts more (WCAG 2 ratio);
  // links use the accent only where it reads on white at 4.5:1, else a safe blue.
  function palette(color) {
    const rgb = rgbOf(color) || rgbOf('#0b5fff') || [11, 95, 255];
    const l = luminance(rgb);
    const white = contrast(1, l);
    const dark = contrast(DARK_L, l);
    // Mid-tones (luminance ≈ 0.18–0.23) reach 4.5:1 with neither: pure black always does there.
    const black = contrast(0, l);
    const onAccent = Math.max(white, dark) >= 4.5 ? (white >= dark ? '#fff' : DARK_TEXT) : white >= black ? '#fff' : '#000';
    return {
      accent: `rgb(${rgb.map(Math.round).join(' ')})`,
      onAccent,
      onAccentRatio: onAccent === '#fff' ? white : onAccent === '#000' ? black : dark,
      link: white >= 4.5 ? `rgb(${rgb.map(Math.round).join(' ')})` : '#1d4ed8',
    };
  }

  const enc = encodeURIComponent;
  class WidgetError extends Error {
    constructor(kind, message, status, detail) {
      super(message);
      this.kind = kind;
      this.status = status || 0;
      this.detail = detail || '';
    }
  }
  // Events: a CustomEvent on `document` plus handlers registered with Concierge('on', …).
  // Payloads are minimal on purpose: any script on the host page can read them.
  const listeners = {};
  function emit(name, detail) {
    document.dispatchEvent(new CustomEvent('concierge:' + name, { detail }));
    for (const fn of (listeners[name] || []).slice()) {
      try {
        fn(detail);
      } catch (e) {
        setTimeout(() => {
          throw e; // a host handler's bug surfaces in the host's console, not ours
        });
      }
    }
  }
  function inspect(name, detail) {
    if (cfg.inspect) document.dispatchEvent(new CustomEvent('concierge:inspect:' + name, { detail }));
  }
  function jwtSub(token) {
    try {
      const p = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const sub = JSON.parse(atob(p.padEnd(Math.ceil(p.length / 4) * 4, '='))).sub;
      return sub !== undefined && sub !== null && sub !== '' ? String(sub) : null;
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

  // Icons are built node by node (createElementNS), never parsed from markup, so a page
  // that requires Trusted Types for script sinks runs the widget unchanged.
  const ROUND = { stroke: 'currentColor', 'stroke-width': '2.2', 'stroke-linecap': 'round' };
  const OUTLINE = { fill: 'none', stroke: 'currentColor', 'stroke-width': '1.8', 'stroke-linejoin': 'round' };
  const ICONS = {
    chat: [['path', { d: 'M4 5.5A2.5 2.5 0 0 1 6.5 3h11A2.5 2.5 0 0 1 20 5.5v8a2.5 2.5 0 0 1-2.5 2.5H10l-4.2 3.6c-.5.4-1.3.1-1.3-.6V16A2.5 2.5 0 0 1 4 13.5z', fill: 'currentColor' }]],
    close: [['path', Object.assign({ d: 'M6 6l12 12M18 6L6 18' }, ROUND)]],
    plus: [['path', Object.assign({ d: 'M12 5v14M5 12h14' }, ROUND)]],
    send: [['path', { d: 'M4 12l16-8-6 16-2.5-6.5z', fill: 'currentColor' }]],
    up: [['path', Object.assign({ d: 'M7 11v9H4v-9zm2 9h8.2a2 2 0 0 0 2-1.6l1.3-6A2 2 0 0 0 18.5 10H14l.7-3.6A1.7 1.7 0 0 0 13 4.3L9 11z' }, OUTLINE)]],
    down: [['path', Object.assign({ d: 'M7 13V4H4v9zm2-9h8.2a2 2 0 0 1 2 1.6l1.3 6a2 2 0 0 1-2 2.4H14l.7 3.6a1.7 1.7 0 0 1-1.7 2.1L9 13z' }, OUTLINE)]],
    person: [
      ['circle', { cx: '12', cy: '8', r: '4', fill: 'currentColor' }],
      ['path', { d: 'M4 20c.8-4 4-6 8-6s7.2 2 8 6', fill: 'currentColor' }],
    ],
  };
  const SVG_NS = 'http://www.w3.org/2000/svg';
  function svgEl(tag, attrs) {
    const el = document.createElementNS(SVG_NS, tag);
    for (const k of Object.keys(attrs)) el.setAttribute(k, attrs[k]);
    return el;
  }
  function icon(name, size) {
    const s = String(size || 20);
    const svg = svgEl('svg', { viewBox: '0 0 24 24', width: s, height: s, focusable: 'false' });
    for (const [tag, attrs] of ICONS[name]) svg.append(svgEl(tag, attrs));
    const span = document.createElement('span');
    span.className = 'ico';
    span.setAttribute('aria-hidden', 'true');
    span.append(svg);
    return span;
  }

  // ---------------------------------------------------------------- rich text (escaped by construction)
  // A Markdown subset: paragraphs, headings (as bold lines), nested "-"/"1." lists (a numbered
  // list keeps its numbers across nested bullets), ``` code blocks, pipe tables, **bold**,
  // *italic*/_italic_, `code`, [text](url) and citation markers [n] → links to the cited
  // source. Text only ever becomes text nodes.
  const INLINE =
    /(\*\*[^*\n]+\*\*|`[^`\n]+`|\[[^\]\n]+\]\((?:https?:\/\/|\/)[^)\s]+\)|\[\d{1,2}\]|(?<![\w*])\*(?![\s*])[^*\n]+?(?<![\s*])\*(?![\w*])|(?<![\w_])_(?![\s_])[^_\n]+?(?<![\s_])_(?![\w_]))/g;
  function inline(text, cites) {
    const frag = document.createDocumentFragment();
    let last = 0;
    text.replace(INLINE, (tok, _g, at) => {
      if (at > last) frag.append(text.slice(last, at));
      last = at + tok.length;
      if (tok.startsWith('**')) frag.append(h('strong', null, inline(tok.slice(2, -2), cites)));
      else if (tok.startsWith('`')) frag.append(h('code', null, tok.slice(1, -1)));
      else if (tok[0] === '*' || tok[0] === '_') frag.append(h('em', null, inline(tok.slice(1, -1), cites)));
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
        'aria-label': t('sourceN', { n, title: c.title || href }),
      },
      `[${n}]`
    );
  }
  const FENCE = /^\s*(```|~~~)/;
  const LIST_ITEM = /^(\s*)([-*•+]|\d{1,3}[.)])\s+(.*)$/;
  const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
  function cells(line) {
    return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
  }
  function listItems(lines, i) {
    // Consecutive list lines (with indented continuation lines and single blank lines between
    // items) → [{indent, kind, start, text}], and the index after them.
    const items = [];
    while (i < lines.length) {
      const line = lines[i];
      const m = LIST_ITEM.exec(line);
      if (m) {
        const numbered = /\d/.test(m[2]);
        items.push({ indent: m[1].replace(/\t/g, '    ').length, kind: numbered ? 'ol' : 'ul', start: numbered ? parseInt(m[2], 10) : 1, text: m[3] });
        i++;
      } else if (line.trim() && /^\s+/.test(line) && items.length) {
        items[items.length - 1].text += '\n' + line.trim();
        i++;
      } else if (!line.trim() && i + 1 < lines.length && LIST_ITEM.test(lines[i + 1])) {
        i++;
      } else break;
    }
    return [items, i];
  }
  function buildList(items, at, cites) {
    const first = items[at];
    const list = h(first.kind, first.kind === 'ol' && first.start !== 1 ? { start: String(first.start) } : null);
    let i = at;
    let li = null;
    while (i < items.length && items[i].indent >= first.indent) {
      const it = items[i];
      if (it.indent > first.indent && li) {
        const [sub, next] = buildList(items, i, cites);
        li.append(sub);
        i = next;
        continue;
      }
      if (it.kind !== first.kind) break;
      li = h('li');
      it.text.split('\n').forEach((l, k) => {
        if (k) li.append(h('br'));
        li.append(inline(l, cites));
      });
      list.append(li);
      i++;
    }
    return [list, i];
  }
  function rich(text, cites) {
    const frag = document.createDocumentFragment();
    const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    const startsBlock = (k) =>
      FENCE.test(lines[k]) || LIST_ITEM.test(lines[k]) || (lines[k].includes('|') && k + 1 < lines.length && TABLE_RULE.test(lines[k + 1]));
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) {
        i++;
      } else if (FENCE.test(line)) {
        const fence = FENCE.exec(line)[1];
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
        i++; // the closing fence (or the end of an unfinished stream)
        frag.append(h('pre', { dir: 'ltr', tabindex: '0' }, h('code', null, body.join('\n'))));
      } else if (line.includes('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
        const head = cells(line);
        const table = h('table', null, h('thead', null, h('tr', null, head.map((c) => h('th', { scope: 'col' }, inline(c, cites))))));
        const tbody = h('tbody');
        i += 2;
        while (i < lines.length && lines[i].includes('|') && lines[i].trim()) {
          tbody.append(h('tr', null, cells(lines[i]).map((c) => h('td', null, inline(c, cites)))));
          i++;
        }
        table.append(tbody);
        frag.append(h('div', { class: 'table', tabindex: '0' }, table));
      } else if (LIST_ITEM.test(line)) {
        const [items, next] = listItems(lines, i);
        let k = 0;
        while (k < items.length) {
          const [list, after] = buildList(items, k, cites);
          frag.append(list);
          k = after;
        }
        i = next;
      } else {
        const p = h('p');
        let k = 0;
        while (i < lines.length && lines[i].trim() && !(k && startsBlock(i))) {
          const heading = /^#{1,6}\s+(.*)$/.exec(lines[i]);
          if (k) p.append(h('br'));
          p.append(heading ? h('strong', null, inline(heading[1], cites)) : inline(lines[i], cites));
          i++;
          k++;
        }
        frag.append(p);
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
.launcher { position: fixed; inset: auto var(--cg-x) var(--cg-y) auto; margin: 0; padding: 0; width: 60px; height: 60px;
  border-radius: 50%; border: 0; background: var(--cg-accent); color: var(--cg-on-accent); display: grid;
  place-items: center; box-shadow: 0 6px 20px rgba(16,24,40,.28); z-index: var(--cg-z); transition: transform .15s;
  overflow: visible; }
.launcher:hover { transform: scale(1.05); }
.launcher:focus-visible { outline: 3px solid var(--cg-link); outline-offset: 3px; }
.left .launcher { left: var(--cg-x); right: auto; }
.no-launcher .launcher { display: none; }
.badge { position: absolute; top: -3px; right: -3px; min-width: 22px; height: 22px; padding: 0 6px;
  border-radius: 11px; background: #d92d20; color: #fff; font-size: 12px; font-weight: 700;
  display: grid; place-items: center; border: 2px solid #fff; }
.panel { position: fixed; inset: auto var(--cg-x) calc(var(--cg-y) + 72px) auto; margin: 0; padding: 0;
  width: 384px; height: min(660px, calc(100vh - var(--cg-y) - 92px)); min-height: 320px; max-width: calc(100vw - 16px);
  background: #fff; color: #1c2430; border-radius: 16px; border: 1px solid rgba(16,24,40,.1);
  box-shadow: 0 16px 48px rgba(16,24,40,.28); display: flex; flex-direction: column; overflow: hidden;
  z-index: var(--cg-z); }
.no-launcher .panel { bottom: var(--cg-y); height: min(660px, calc(100vh - 2 * var(--cg-y))); }
.left .panel { left: var(--cg-x); right: auto; }
.panel:not(:popover-open)[popover] { display: none; }
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
.bubble pre { margin: .3em 0 .6em; padding: 8px 10px; background: #eef1f5; border-radius: 8px; overflow-x: auto;
  white-space: pre; text-align: left; }
.bubble pre code { padding: 0; background: none; font-size: 12.5px; }
.bubble .table { overflow-x: auto; margin: .3em 0 .6em; }
.bubble table { border-collapse: collapse; font-size: 13.5px; }
.bubble th, .bubble td { border: 1px solid #d0d5dd; padding: 3px 7px; text-align: start; vertical-align: top; }
.bubble th { background: #f2f4f7; font-weight: 600; }
.bubble em { font-style: italic; }
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
.counter { font-size: 11.5px; color: #5b6472; padding: 0 12px; background: #fff; text-align: end; flex: none; }
.counter.over { color: #b42318; font-weight: 600; }
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
  .panel, .left .panel, .no-launcher .panel { inset: 0; width: auto; height: auto; min-height: 0; max-width: none;
    border-radius: 0; border: 0; }
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

  const rootEl = h('div', { class: 'root', dir: 'ltr' });
  const badge = h('span', { class: 'badge', hidden: true, 'aria-hidden': 'true' });
  const launcher = h(
    'button',
    { class: 'launcher', type: 'button', 'aria-expanded': 'false', 'aria-controls': 'cg-panel' },
    icon('chat', 28),
    badge
  );
  const titleEl = h('h2', { id: 'cg-title' });
  const subtitle = h('p', { class: 'sub', id: 'cg-sub' });
  const newBtn = h('button', { class: 'hbtn', type: 'button' }, icon('plus'));
  const closeBtn = h('button', { class: 'hbtn close', type: 'button' }, icon('close'));
  const log = h('div', { class: 'log', id: 'cg-log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions', tabindex: '0' });
  const alertBox = h('div', { class: 'alert', role: 'alert', hidden: true });
  const resolvedBar = h('div', { class: 'resolved', role: 'group', hidden: true });
  // No maxlength: it would cut a long paste silently. The counter says how far over it is.
  const input = h('textarea', {
    id: 'cg-input', rows: '1', dir: 'auto', 'aria-describedby': 'cg-hint cg-counter', autocomplete: 'off', enterkeyhint: 'send',
  });
  const sendBtn = h('button', { class: 'send', type: 'submit' }, icon('send'));
  const inputLabel = h('label', { class: 'sr', for: 'cg-input' });
  const hint = h('span', { class: 'sr', id: 'cg-hint' });
  const composer = h('form', { class: 'composer', novalidate: true }, inputLabel, hint, input, sendBtn);
  const counter = h('div', { class: 'counter', id: 'cg-counter', 'aria-live': 'polite', hidden: true });
  const handoffBtn = h('button', { class: 'linkish handoff', type: 'button' });
  const powered = h('span');
  const foot = h('div', { class: 'foot' }, handoffBtn, powered);
  const panel = h(
    'section',
    { class: 'panel', id: 'cg-panel', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'cg-title', 'aria-describedby': 'cg-sub', hidden: true },
    h('header', null, h('div', { class: 'titles' }, titleEl, subtitle), newBtn, closeBtn),
    log,
    alertBox,
    resolvedBar,
    composer,
    counter,
    foot
  );
  // The top layer (popover) puts the launcher and panel above anything the host stacks,
  // whatever its z-index; browsers without it use the z-index option.
  const TOP_LAYER = typeof HTMLElement.prototype.showPopover === 'function';
  if (TOP_LAYER) {
    launcher.setAttribute('popover', 'manual');
    panel.setAttribute('popover', 'manual');
  }
  function topLayer(el, show) {
    if (!TOP_LAYER || !el.isConnected) return;
    try {
      if (show && !el.matches(':popover-open')) el.showPopover();
      else if (!show && el.matches(':popover-open')) el.hidePopover();
    } catch (_) {
      /* not connected yet, or already in that state */
    }
  }
  rootEl.append(panel, launcher);
  shadow.append(rootEl);

  function applyLook() {
    const pal = palette(cfg.accent);
    rootEl.style.setProperty('--cg-accent', pal.accent);
    rootEl.style.setProperty('--cg-on-accent', pal.onAccent);
    rootEl.style.setProperty('--cg-link', pal.link);
    rootEl.style.setProperty('--cg-x', cfg.offsetX + 'px');
    rootEl.style.setProperty('--cg-y', cfg.offsetY + 'px');
    rootEl.style.setProperty('--cg-z', String(cfg.zIndex));
    rootEl.classList.toggle('left', cfg.position === 'left');
    rootEl.classList.toggle('no-launcher', !!(cfg.hideLauncher || cfg.launcher));
    rootEl.setAttribute('data-on-accent-ratio', pal.onAccentRatio.toFixed(2));
  }
  function applyLabels() {
    rootEl.setAttribute('lang', lang);
    titleEl.textContent = cfg.title;
    newBtn.setAttribute('aria-label', t('startNew'));
    newBtn.title = t('newConversation');
    closeBtn.setAttribute('aria-label', t('closeChat', { title: cfg.title }));
    closeBtn.title = t('closeEsc');
    log.setAttribute('aria-label', t('conversation'));
    resolvedBar.setAttribute('aria-label', t('didThisSolve'));
    input.placeholder = t('placeholder');
    sendBtn.setAttribute('aria-label', t('send'));
    inputLabel.textContent = t('yourMessage');
    hint.textContent = t('hint');
    powered.textContent = t('poweredBy');
    updateBadge();
    updateHeader();
    updateCounter();
  }

  // ---------------------------------------------------------------- state
  let identityKey = 'anon';
  let provider = null; // () => Promise<string|null>: the identity token for a new session
  let currentToken = null;
  let st = {}; // persisted per identity: session, conversation, answered prompts, read mark
  let gen = 0; // bumps on identity switch / reset; stale async results check it and bail out
  let mounted = false;
  let isOpen = false;
  let busy = false;
  let abortCtl = null;
  let pollTimer = null;
  let pollFailures = 0;
  let nextPollMs = null; // when the next poll runs (null: none scheduled)
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
  function storedKeys() {
    const keys = [];
    try {
      for (let i = 0; i < localStorage.length; i++) {
        const k = localStorage.key(i);
        if (k && k.startsWith(LS_PREFIX)) keys.push(k);
      }
    } catch (_) {
      /* storage unavailable */
    }
    return keys;
  }
  // Signing out: the session token leaves this browser and stops working on the server.
  function revoke(token) {
    if (!token) return;
    rawFetch('/v1/sessions/current', {
      method: 'DELETE',
      headers: { Authorization: 'Bearer ' + token },
      keepalive: true,
    }).catch(() => {
      /* offline: the token is gone from this browser and expires within hours anyway */
    });
  }
  function forgetIdentity(key) {
    let saved = {};
    try {
      saved = JSON.parse(localStorage.getItem(LS_PREFIX + key) || '{}') || {};
      localStorage.removeItem(LS_PREFIX + key);
    } catch (_) {
      /* nothing stored */
    }
    revoke(saved.sessionToken);
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
      unreadCount: unread,
      pollDelayMs: nextPollMs,
      live: !!listenCtl,
      locale: lang,
      apiBase: API,
      version: VERSION,
    };
  }
  function publicCustomer(c) {
    return c ? { id: c.id, name: c.name || null } : null;
  }

  // ---------------------------------------------------------------- HTTP
  // Every request has a deadline (a server that never answers must not leave the widget
  // busy); reads and session creation are retried with backoff, writes are not (the
  // customer decides, from an inline error with a "Try again" button).
  async function rawFetch(path, o) {
    o = o || {};
    const headers = Object.assign({ Accept: 'application/json' }, o.headers || {});
    if (o.body !== undefined) headers['Content-Type'] = 'application/json';
    const ctl = new AbortController();
    const outer = o.signal;
    const onAbort = () => ctl.abort();
    if (outer) {
      if (outer.aborted) ctl.abort();
      else outer.addEventListener('abort', onAbort, { once: true });
    }
    let timedOut = false;
    const ms = o.timeout === undefined ? cfg.timeoutMs : o.timeout;
    const timer = ms
      ? setTimeout(() => {
          timedOut = true;
          ctl.abort();
        }, ms)
      : 0;
    try {
      return await fetch(API + path, {
        method: o.method || 'GET',
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        signal: ctl.signal,
        keepalive: !!o.keepalive,
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch (e) {
      if (timedOut) throw new WidgetError('timeout', t('errTimeout'));
      if (e && e.name === 'AbortError') throw e;
      throw new WidgetError('network', navigator.onLine === false ? t('offline') : t('errNetwork'));
    } finally {
      clearTimeout(timer);
      if (outer) outer.removeEventListener('abort', onAbort);
    }
  }
  const TRANSIENT = ['network', 'timeout', 'server', 'unavailable'];
  function sleep(ms) {
    return new Promise((r) => setTimeout(r, ms));
  }
  async function withRetry(fn, attempts) {
    for (let n = 0; ; n++) {
      try {
        return await fn();
      } catch (e) {
        if (n + 1 >= (attempts || 3) || !e || !TRANSIENT.includes(e.kind)) throw e;
        await sleep(500 * Math.pow(2, n) * (0.75 + Math.random() / 2));
      }
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
      const e = new WidgetError('rate_limited', t('errRate', { secs }), s, detail);
      e.retryAfter = secs;
      return e;
    }
    if (s === 413) return new WidgetError('too_large', t('errTooLarge'), s, detail);
    if (s === 422) return new WidgetError('invalid', detail || t('errInvalid'), s, detail);
    if (s === 404) return new WidgetError('not_found', t('errNotFound'), s, detail);
    if (s === 401) return new WidgetError('unauthorized', t('errSession'), s, detail);
    if (s === 503) return new WidgetError('unavailable', t('errStarting'), s, detail);
    if (s >= 500) return new WidgetError('server', t('errServer'), s, detail);
    return new WidgetError('http', detail || t('errHttp', { s }), s, detail);
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
        throw new WidgetError('identity', t('errIdentityGet'));
      }
    }
    const body = { locale: lang };
    if (token) body.identityToken = token;
    const res = await withRetry(async () => {
      const r = await rawFetch('/v1/sessions', { method: 'POST', body });
      if (!r.ok) throw Object.assign(await toError(r), { response: r });
      return r;
    }).catch((err) => {
      if (err.status === 401) {
        err.kind = 'identity';
        err.message = t('errIdentity', { detail: err.detail || '401' });
      }
      throw err;
    });
    const out = await res.json();
    if (myGen !== gen) throw new WidgetError('stale', 'identity changed');
    if (st.sessionToken && st.sessionToken !== out.sessionToken && st.tokenHash !== (token ? fnv(token) : null)) {
      revoke(st.sessionToken); // the previous identity's session on this key
    }
    st.tokenHash = token ? fnv(token) : null;
    st.sessionToken = out.sessionToken;
    st.sessionExpiresAt = out.expiresAt || null;
    st.customer = out.customer || null;
    st.anonymous = !!out.anonymous;
    save();
    setLang(chooseLang(st.customer && st.customer.locale));
    updateHeader();
    emit('identity', { customer: publicCustomer(st.customer), anonymous: st.anonymous });
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
    Object.assign(st, { conversationId: c.id, lastSeq: 0, readSeq: 0, serverReadSeq: 0, status: c.status || 'open', caseRef: null, resolved: null, feedback: {} });
    save();
    return c.id;
  }
  function convPath(suffix) {
    return '/v1/conversations/' + enc(st.conversationId) + (suffix || '');
  }
  function forgetConversation(note) {
    stopListening();
    held.length = 0;
    Object.assign(st, { conversationId: null, lastSeq: 0, readSeq: 0, serverReadSeq: 0, status: null, caseRef: null, resolved: null, feedback: {} });
    save();
    shownCases.clear();
    resolvedBar.hidden = true;
    if (note) log.append(h('p', { class: 'divider' }, note));
    updateHeader();
  }

  // ---------------------------------------------------------------- rendering
  // The log stays pinned to the newest message unless the reader has scrolled up; content
  // changes (streaming, sources, feedback forms) and size changes (prompt bars, errors,
  // keyboard on phones) keep it pinned. A long answer is the exception: once its first line
  // reaches the top, the view stops there so it is read from the start.
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
  function revealStart(el) {
    // Show the message from its first line when it does not fit below what is already visible.
    const top = el.offsetTop - log.offsetTop - 8;
    if (el.offsetHeight > log.clientHeight - 24) {
      log.scrollTop = top;
      pinned = false;
      return true;
    }
    return false;
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
    return meta.agent || meta.agentName || t('agent');
  }
  function greet() {
    log.replaceChildren(h('div', { class: 'msg greeting' }, h('span', { class: 'sr' }, cfg.title + ': '), h('div', { class: 'bubble', dir: 'auto' }, plain(cfg.greeting || t('greeting')))));
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
      const title = c.title || (c.kind === 'ticket' ? t('resolvedTicket') : t('article'));
      list.append(
        h(
          'li',
          { value: String(c.n) },
          href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer', 'data-source': c.n, dir: 'auto' }, title) : h('span', { dir: 'auto' }, title),
          h('span', { class: 'kind' }, c.kind === 'ticket' ? t('solvedCase') : t('article')),
          c.breadcrumb && c.breadcrumb !== title ? h('span', { class: 'crumb', dir: 'auto' }, c.breadcrumb) : null
        )
      );
    }
    return h('div', { class: 'sources' }, h('h3', null, t('sources')), list);
  }

  function fillMessage(el, m) {
    el.__msg = m;
    const meta = m.meta || {};
    el.className = 'msg ' + m.role;
    el.setAttribute('data-role', m.role);
    if (m.id) el.setAttribute('data-id', m.id);
    if (m.seq !== undefined && m.seq !== null) el.setAttribute('data-seq', String(m.seq));
    if (m.createdAt) el.title = new Date(m.createdAt).toLocaleString(lang);
    el.replaceChildren();
    const who = m.role === 'user' ? t('you') : m.role === 'agent' ? agentName(m) : cfg.title;
    el.append(h('span', { class: 'sr' }, m.role === 'agent' ? who + t('teamSuffix') + ': ' : who + ': '));
    if (m.role === 'agent') {
      el.append(h('div', { class: 'who', 'aria-hidden': 'true' }, h('span', { class: 'avatar' }, initials(who)), who, h('span', { class: 'tag' }, t('teamTag'))));
    }
    const cites = Array.isArray(meta.citations) ? meta.citations : [];
    // dir=auto: each message takes its direction from its own first strong character, so
    // Arabic typed on an English page (or English on a right-to-left page) reads correctly.
    el.append(h('div', { class: 'bubble', dir: 'auto' }, m.role === 'user' ? plain(m.content) : rich(m.content, cites)));
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
    if (m.role === 'user' || !revealStart(el)) scrollDown(stick || m.role === 'user');
    return el;
  }
  // Unread: replies (from a person or the bot) with a seq past the last one seen with the
  // panel open, whether they arrive live or are found in the history on the next page.
  function ingest(m) {
    if (!m || !m.id || rendered.has(m.id)) return;
    renderMessage(m);
    if (m.role === 'agent') resolvedBar.hidden = true;
    if (m.role !== 'user' && m.seq && m.seq > (st.readSeq || 0)) {
      if (isOpen) markRead();
      else {
        setUnread(unread + 1);
        emit('message', { id: m.id, role: m.role, conversationId: st.conversationId });
      }
    }
  }
  function markRead() {
    st.readSeq = Math.max(st.readSeq || 0, st.lastSeq || 0);
    save();
    setUnread(0);
    syncRead();
  }
  // The read mark also lives on the server, so the count is right on the next page, in the
  // next tab and on the customer's other devices.
  let readTimer = 0;
  function syncRead() {
    clearTimeout(readTimer);
    readTimer = setTimeout(() => {
      const seq = st.readSeq || 0;
      if (!st.conversationId || !st.sessionToken || seq <= (st.serverReadSeq || 0)) return;
      const conv = st.conversationId;
      api(convPath('/read'), { method: 'POST', body: { seq } })
        .then(() => {
          if (conv === st.conversationId) {
            st.serverReadSeq = Math.max(st.serverReadSeq || 0, seq);
            save();
          }
        })
        .catch(() => {
          /* the local mark still holds; the next read retries */
        });
    }, 400);
  }
  function setUnread(n) {
    const changed = n !== unread;
    unread = n;
    updateBadge();
    if (changed) emit('unreadCountChange', { count: n });
  }
  function updateBadge() {
    badge.hidden = unread === 0;
    badge.textContent = unread > 9 ? '9+' : String(unread);
    const label = t('openChat', { title: cfg.title });
    launcher.setAttribute('aria-label', unread ? `${label} (${unread === 1 ? t('newReply') : t('newReplies', { n: unread })})` : label);
  }
  function updateHeader() {
    const escalated = st.status === 'escalated';
    if (escalated) subtitle.textContent = t('withTeam') + (st.caseRef ? t('caseSuffix', { ref: st.caseRef }) : '');
    else if (st.customer && st.customer.name) subtitle.textContent = t('signedInAs', { name: st.customer.name });
    else subtitle.textContent = t('askAnything');
    handoffBtn.disabled = escalated;
    handoffBtn.textContent = escalated ? t('personHasCase') : t('talkToPerson');
  }
  function setStatus(s) {
    if (!s || s === st.status) return;
    const was = st.status;
    st.status = s;
    save();
    if (was === 'escalated' && s !== 'escalated') {
      log.append(h('div', { class: 'notice muted', role: 'status' }, h('div', null, h('strong', null, t('caseClosed')), h('p', null, t('caseClosedBody')))));
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
        h('div', null, h('strong', null, t('connecting')), h('p', null, t('caseRef'), h('span', { class: 'case' }, caseRef), t('caseRefAfter')))
      )
    );
    scrollDown(true);
    updateHeader();
    if (isNew) emit('escalated', { caseRef, conversationId: st.conversationId });
  }

  // ---------------------------------------------------------------- feedback
  function feedbackRow(m) {
    const prev = st.feedback ? st.feedback[m.id] : undefined;
    const up = h('button', { type: 'button', class: 'icon-btn', 'aria-label': t('helpful'), 'aria-pressed': prev === true ? 'true' : 'false', 'data-feedback': 'up' }, icon('up', 18));
    const down = h('button', { type: 'button', class: 'icon-btn', 'aria-label': t('notHelpful'), 'aria-pressed': prev === false ? 'true' : 'false', 'data-feedback': 'down' }, icon('down', 18));
    const status = h('span', { class: 'fb-status', role: 'status' });
    const row = h('div', { class: 'fb', role: 'group', 'aria-label': t('wasHelpful') }, h('span', { class: 'fb-q', 'aria-hidden': 'true' }, t('helpfulQ')), up, down, status);
    const ctx = { id: m.id, row, up, down, status, form: null };
    if (prev !== undefined && prev !== null) {
      up.disabled = down.disabled = true;
      status.textContent = t('thanksFeedback');
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
    const ta = h('textarea', { id, rows: '2', maxlength: '1000', placeholder: t('optional'), dir: 'auto' });
    const form = h(
      'form',
      { class: 'fb-form', novalidate: true },
      h('label', { for: id }, t('whatWasWrong')),
      ta,
      h('div', { class: 'row' }, h('button', { type: 'submit', class: 'btn primary' }, t('sendFeedback')), h('button', { type: 'button', class: 'btn', 'data-skip': '' }, t('skip')))
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
    ctx.status.textContent = t('sending');
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
      ctx.status.textContent = t('thanksFeedback');
    } catch (e) {
      ctx.status.textContent = t('feedbackFailed');
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
    const yes = h('button', { type: 'button', class: 'btn', 'data-resolved': 'yes' }, t('yes'));
    const no = h('button', { type: 'button', class: 'btn', 'data-resolved': 'no' }, t('no'));
    resolvedBar.replaceChildren(h('span', { class: 'q', id: 'cg-resolved-q' }, t('didThisSolve')), yes, no);
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
    const msg = h('span', { class: 'q', role: 'status' }, value ? t('glad') : t('sorryDidnt'));
    resolvedBar.replaceChildren(msg);
    if (!value && st.status !== 'escalated') {
      const b = h('button', { type: 'button', class: 'btn primary' }, t('talkToPerson'));
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
    const text = h('p', null, (err && err.message) || t('errServer'));
    const row = h('div', { class: 'row' });
    if (retry) {
      const b = h('button', { type: 'button', class: 'linkish', 'data-retry': '' }, t('tryAgain'));
      b.addEventListener('click', () => {
        hideError();
        retry();
      });
      if (err && err.retryAfter) {
        let left = err.retryAfter;
        b.disabled = true;
        b.textContent = t('tryAgainN', { n: left });
        countdownTimer = setInterval(() => {
          left -= 1;
          if (left <= 0) {
            clearInterval(countdownTimer);
            b.disabled = false;
            b.textContent = t('tryAgain');
          } else b.textContent = t('tryAgainN', { n: left });
        }, 1000);
      }
      row.append(b);
    }
    (extra || []).forEach((x) => row.append(x));
    const dismiss = h('button', { type: 'button', class: 'linkish', 'aria-label': t('dismissMsg') }, t('dismiss'));
    dismiss.addEventListener('click', () => {
      hideError();
      input.focus();
    });
    row.append(dismiss);
    alertBox.append(h('div', { style: null }, text, row));
    alertBox.hidden = false;
    emit('error', { kind: (err && err.kind) || null, message: (err && err.message) || null, status: (err && err.status) || 0 });
  }
  function identityError(e) {
    const guest = h('button', { type: 'button', class: 'linkish' }, t('continueGuest'));
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
    updateCounter();
    composer.setAttribute('aria-busy', String(b));
  }
  function updateCounter() {
    // Shown from 80 % of the limit; over it, Send is disabled and the counter says by how much.
    const n = input.value.length;
    const over = n > MAX_LEN;
    counter.hidden = n < MAX_LEN * 0.8;
    counter.classList.toggle('over', over);
    counter.textContent = t('counter', { n, max: MAX_LEN }) + (over ? ' — ' + t('tooLongBy', { n: n - MAX_LEN }) : '');
    sendBtn.disabled = busy || over;
    input.setAttribute('aria-invalid', String(over));
  }
  function attachUser(el, um) {
    if (!um || !um.id) return;
    el.setAttribute('data-id', um.id);
    if (um.seq !== undefined) el.setAttribute('data-seq', String(um.seq));
    rendered.set(um.id, el);
    if (um.seq) st.lastSeq = Math.max(st.lastSeq || 0, um.seq);
  }
  function startBubble() {
    const bubble = h('div', { class: 'bubble', dir: 'auto' }, h('span', { class: 'typing', role: 'img', 'aria-label': t('typing') }, h('i'), h('i'), h('i')));
    const el = h('div', { class: 'msg assistant streaming', 'aria-busy': 'true' }, h('span', { class: 'sr' }, cfg.title + ': '), bubble);
    log.append(el);
    scrollDown(true);
    return { el, bubble, text: '', frame: 0, revealed: false };
  }
  function paint(s) {
    if (s.frame) return;
    s.frame = requestAnimationFrame(() => {
      s.frame = 0;
      const stick = nearBottom();
      s.bubble.replaceChildren(rich(s.text, []));
      const last = s.bubble.lastElementChild || s.bubble;
      last.append(h('span', { class: 'caret', 'aria-hidden': 'true' }));
      if (s.revealed) return;
      if (stick && revealStart(s.el)) s.revealed = true;
      else scrollDown(stick);
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
    if (isOpen) {
      st.readSeq = Math.max(st.readSeq || 0, st.lastSeq || 0);
      syncRead();
    }
    save();
    const meta = message.meta || {};
    if (meta.escalated && meta.caseRef) showEscalation(meta.caseRef, meta.escalationReason);
    if (!s.revealed && !(stick && revealStart(s.el))) scrollDown(stick);
  }
  function silentNote(userEl) {
    // The conversation is with a person: the bot stays silent and the message waits for them.
    userEl.append(h('span', { class: 'sent-note' }, t('sentToTeam')));
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
  function readWithin(reader, ms) {
    // One chunk, or a timeout error when the stream has been silent for `ms`.
    let timer = 0;
    const idle = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new WidgetError('timeout', t('errTimeout'))), ms);
    });
    return Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
  }

  async function consumeStream(res, userEl, question, myGen, s) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let meta = null;
    let message = null;
    let finished = false;
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
        inspect('meta', { meta, question, conversationId: st.conversationId, customer: st.customer || null });
      } else if (event === 'delta') {
        s.text += d.text || '';
        paint(s);
      } else if (event === 'done') {
        finished = true;
        message = d.message || null;
        if (message) finishBubble(s, message);
        else {
          s.el.remove();
          silentNote(userEl);
        }
      } else if (event === 'error') {
        throw new WidgetError('stream', t('errStream'));
      }
    };
    try {
      for (;;) {
        const chunk = await readWithin(reader, STREAM_IDLE_MS);
        if (chunk.done) break;
        buf = drainEvents(buf + decoder.decode(chunk.value, { stream: true }), handle);
      }
      drainEvents(buf + decoder.decode() + '\n\n', handle);
    } catch (e) {
      try {
        reader.cancel();
      } catch (_) {
        /* already closed */
      }
      if (e.kind === 'timeout') {
        // The server finishes and stores the turn even when the stream stalls: poll for it.
        setTimeout(pollOnce, 1500);
      }
      throw e;
    }
    if (!finished) {
      setTimeout(pollOnce, 1500);
      throw new WidgetError('interrupted', t('errInterrupted'));
    }
    return { meta, message };
  }

  async function deliver(text, userEl, myGen, retried, s) {
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
        forgetConversation(t('earlierGone'));
        log.append(userEl, s.el);
        return deliver(text, userEl, myGen, true, s);
      }
      throw e;
    }
    if (myGen !== gen) throw new WidgetError('stale', 'identity changed');
    const ctype = res.headers.get('content-type') || '';
    if (ctype.includes('text/event-stream') && res.body) return consumeStream(res, userEl, text, myGen, s);
    const body = await res.json();
    attachUser(userEl, body.userMessage);
    const reply = body.reply || null;
    if (reply) finishBubble(s, reply);
    else {
      s.el.remove();
      silentNote(userEl);
    }
    return { meta: reply ? reply.meta : null, message: reply };
  }

  async function send(text) {
    text = String(text === undefined || text === null ? '' : text).trim();
    if (!text) return null;
    if (busy) {
      showError(new WidgetError('busy', t('errBusy')));
      return null;
    }
    if (text.length > MAX_LEN) {
      showError(new WidgetError('too_large', t('errTooLong', { n: text.length, max: MAX_LEN })));
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
    const s = startBubble(); // the typing indicator shows at once, before any byte comes back
    try {
      const turn = await deliver(text, userEl, myGen, false, s);
      if (myGen !== gen) return null;
      save();
      if (turn.message) {
        emit('turn', { conversationId: st.conversationId, messageId: turn.message.id, escalated: !!(turn.message.meta && turn.message.meta.escalated), caseRef: (turn.message.meta && turn.message.meta.caseRef) || null });
        inspect('turn', { meta: turn.meta || turn.message.meta || null, message: turn.message, question: text, conversationId: st.conversationId, customer: st.customer || null });
        if (answered(turn.message)) askResolved();
      }
      return turn.message ? { id: turn.message.id, conversationId: st.conversationId } : { id: null, conversationId: st.conversationId };
    } catch (e) {
      if (s.frame) cancelAnimationFrame(s.frame);
      s.el.remove();
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
        flushHeld();
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
      if (body.message) ingest(body.message);
      showEscalation(body.caseRef, 'explicit');
      save();
    } catch (e) {
      if (myGen === gen) handleError(e, handoff);
    } finally {
      if (myGen === gen) {
        setBusy(false);
        flushHeld();
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
      const res = await withRetry(() => api(convPath()));
      const c = await res.json();
      if (myGen !== gen) return;
      clearLog();
      const msgs = c.messages || [];
      if (st.readSeq === undefined) st.readSeq = st.lastSeq || 0; // state saved by an older widget
      if (typeof c.readSeq === 'number') {
        st.serverReadSeq = Math.max(st.serverReadSeq || 0, c.readSeq);
        st.readSeq = Math.max(st.readSeq, c.readSeq); // seen elsewhere counts as seen
      }
      let fresh = 0;
      for (const m of msgs) {
        renderMessage(m);
        if (m.role !== 'user' && m.seq > (st.readSeq || 0) && !isOpen) {
          fresh++;
          emit('message', { id: m.id, role: m.role, conversationId: st.conversationId });
        }
      }
      if (isOpen) markRead();
      else setUnread(fresh);
      if (c.status) {
        st.status = c.status;
        save();
      }
      updateHeader();
      const last = msgs[msgs.length - 1];
      if (last && last.role === 'assistant' && answered(last)) askResolved();
      scrollDown(true);
      inspect('history', { messages: msgs, conversationId: st.conversationId, customer: st.customer || null });
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
      pollFailures = 0;
      if (myGen !== gen || busy) return;
      (body.messages || []).forEach((m) => ingest(m));
      save();
      setStatus(body.status);
    } catch (e) {
      if (myGen !== gen) return;
      if (e.kind === 'not_found') forgetConversation();
      else pollFailures += 1; // transient: the next tick waits longer
    }
  }
  // Live updates: while the panel is open (or a person has the case) the widget holds one
  // event stream (GET …/messages with Accept: text/event-stream) and the server pushes each
  // stored message; the stream ends every ~25 s and is reopened from the last seq. A server
  // that cannot stream (it answers JSON) is polled instead; a hidden tab polls slowly.
  let listenCtl = null;
  let streamOk = true;
  const held = []; // messages pushed while a turn is streaming: shown once it has finished
  function stopListening() {
    if (listenCtl) listenCtl.abort();
    listenCtl = null;
  }
  function receive(m) {
    if (busy) held.push(m);
    else {
      ingest(m);
      save();
    }
  }
  function flushHeld() {
    held.splice(0).forEach((m) => ingest(m));
    save();
  }
  async function listen() {
    const myGen = gen;
    const ctl = new AbortController();
    listenCtl = ctl;
    let failed = false;
    try {
      const res = await api(convPath('/messages?after=' + (st.lastSeq || 0)), {
        headers: { Accept: 'text/event-stream' },
        signal: ctl.signal,
      });
      if (!(res.headers.get('content-type') || '').includes('text/event-stream') || !res.body) {
        streamOk = false;
        const body = await res.json();
        (body.messages || []).forEach(receive);
        setStatus(body.status);
      } else {
        pollFailures = 0;
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buf = '';
        const handle = (event, raw) => {
          if (myGen !== gen) throw new WidgetError('stale', 'identity changed');
          let d = null;
          try {
            d = JSON.parse(raw);
          } catch (_) {
            return;
          }
          if (event === 'message') receive(d);
          else if (event === 'status' && d.status === 'gone') forgetConversation();
          else if (event === 'status') setStatus(d.status);
        };
        try {
          for (;;) {
            const chunk = await readWithin(reader, STREAM_IDLE_MS);
            if (chunk.done) break;
            buf = drainEvents(buf + decoder.decode(chunk.value, { stream: true }), handle);
          }
        } finally {
          try {
            reader.cancel();
          } catch (_) {
            /* already closed */
          }
        }
      }
    } catch (e) {
      if (myGen !== gen || ctl.signal.aborted || (e && (e.name === 'AbortError' || e.kind === 'stale'))) return;
      if (e.kind === 'not_found') forgetConversation();
      else {
        failed = true;
        pollFailures += 1;
      }
    } finally {
      if (listenCtl === ctl) listenCtl = null;
    }
    if (myGen !== gen || ctl.signal.aborted) return;
    // Reopen at once after a normal end; after a failure wait 3 s, 6 s, 12 s … up to a minute.
    const wait = failed ? Math.min(POLL_MAX_MS, POLL_OPEN_MS * Math.pow(2, Math.min(pollFailures - 1, 5))) : 0;
    nextPollMs = wait || null;
    clearTimeout(pollTimer);
    pollTimer = setTimeout(schedulePoll, wait);
  }
  function schedulePoll() {
    clearTimeout(pollTimer);
    nextPollMs = null;
    let ms = mounted && st.conversationId ? (isOpen ? POLL_OPEN_MS : st.status === 'escalated' ? POLL_BACKGROUND_MS : 0) : 0;
    if (!ms || navigator.onLine === false) {
      stopListening(); // the `online` event restarts it
      return;
    }
    if (streamOk && !document.hidden) {
      if (!listenCtl) listen();
      return;
    }
    stopListening();
    if (document.hidden) ms = Math.max(ms, POLL_BACKGROUND_MS);
    // A server that keeps failing is asked half as often each time, up to once a minute.
    ms = Math.min(POLL_MAX_MS, ms * Math.pow(2, Math.min(pollFailures, 5)));
    nextPollMs = ms;
    const myGen = gen;
    pollTimer = setTimeout(async () => {
      await pollOnce();
      if (myGen === gen) schedulePoll();
    }, ms);
  }

  // ---------------------------------------------------------------- open / close / identity
  // On a phone the panel covers the screen and is modal: focus stays inside, the page behind
  // does not scroll, and it sits in the top layer so no host header can cover its close button.
  const narrow = window.matchMedia('(max-width: 520px)');
  let scrollLock = null;
  let opener = null;
  function isModal() {
    return mounted && isOpen && narrow.matches;
  }
  function applyModal() {
    const modal = isModal();
    panel.setAttribute('aria-modal', String(modal));
    const html = document.documentElement;
    if (modal && !scrollLock) {
      scrollLock = [html.style.getPropertyValue('overflow'), html.style.getPropertyPriority('overflow')];
      html.style.setProperty('overflow', 'hidden', 'important');
    } else if (!modal && scrollLock) {
      if (scrollLock[0]) html.style.setProperty('overflow', scrollLock[0], scrollLock[1]);
      else html.style.removeProperty('overflow');
      scrollLock = null;
    }
  }
  narrow.addEventListener('change', applyModal);
  function focusables() {
    return Array.from(panel.querySelectorAll('button, textarea, a[href], [tabindex="0"]')).filter(
      (el) => !el.disabled && el.getClientRects().length > 0
    );
  }
  function trapTab(e) {
    if (e.key !== 'Tab' || !isModal()) return;
    const items = focusables();
    if (!items.length) return;
    const first = items[0];
    const last = items[items.length - 1];
    const active = shadow.activeElement;
    if (e.shiftKey && (active === first || !panel.contains(active))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (active === last || !panel.contains(active))) {
      e.preventDefault();
      first.focus();
    }
  }
  function hostLaunchers() {
    if (!cfg.launcher) return [];
    try {
      return Array.from(document.querySelectorAll(cfg.launcher));
    } catch (_) {
      return [];
    }
  }
  function syncLaunchers() {
    const showOwn = !(cfg.hideLauncher || cfg.launcher);
    topLayer(launcher, mounted && showOwn);
    for (const el of hostLaunchers()) {
      el.setAttribute('aria-expanded', String(isOpen));
      el.setAttribute('aria-controls', 'concierge-widget');
    }
  }
  function open() {
    if (!mounted || isOpen) return;
    isOpen = true;
    const active = document.activeElement;
    opener = active && active !== hostEl && active !== document.body ? active : null;
    panel.hidden = false;
    topLayer(panel, true);
    rootEl.classList.add('open');
    launcher.setAttribute('aria-expanded', 'true');
    syncLaunchers();
    applyModal();
    input.focus({ preventScroll: true });
    scrollDown(true);
    if (st.conversationId && rendered.size === 0) restore();
    else {
      markRead();
      if (st.conversationId) pollOnce();
    }
    schedulePoll();
    emit('open', {});
  }
  function close() {
    if (!isOpen) return;
    flushFeedback();
    const hadFocus = panel.contains(shadow.activeElement);
    isOpen = false;
    panel.hidden = true;
    topLayer(panel, false);
    rootEl.classList.remove('open');
    launcher.setAttribute('aria-expanded', 'false');
    syncLaunchers();
    applyModal();
    if (hadFocus) {
      if (opener && opener.isConnected) opener.focus();
      else if (!(cfg.hideLauncher || cfg.launcher)) launcher.focus();
    }
    opener = null;
    schedulePoll();
    emit('close', {});
  }
  function toggle() {
    if (isOpen) close();
    else open();
  }
  function setLang(next) {
    if (next === lang) return;
    lang = next;
    applyLabels();
    if (!rendered.size) greet();
    for (const el of rendered.values()) if (el.__msg) fillMessage(el, el.__msg);
  }
  function switchTo(key) {
    gen += 1;
    if (abortCtl) abortCtl.abort();
    stopListening();
    held.length = 0;
    clearTimeout(pollTimer);
    sessionPromise = null;
    pendingFeedback = null;
    pollFailures = 0;
    setBusy(false);
    identityKey = key;
    load();
    setUnread(0);
    hideError();
    resolvedBar.hidden = true;
    setLang(chooseLang(st.customer && st.customer.locale));
    clearLog();
    updateHeader();
  }
  function dropSessionIfTokenChanged(token) {
    // State is keyed by the token's (unverified) `sub`; a session is only reused for the very
    // token that created it, so any other token is verified by the server before it counts.
    if (token && st.tokenHash !== fnv(token) && st.sessionToken) {
      revoke(st.sessionToken);
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
    if (same || !mounted) {
      if (!mounted) identityKey = key;
      return snapshot();
    }
    // Leaving a signed-in customer signs them out here: their session is revoked and their
    // state removed from this browser, so the next person at this screen cannot read it.
    if (identityKey !== 'anon' && key !== identityKey) forgetIdentity(identityKey);
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
  function newConversation() {
    flushFeedback();
    gen += 1;
    if (abortCtl) abortCtl.abort();
    clearTimeout(pollTimer);
    setBusy(false);
    forgetConversation();
    hideError();
    clearLog();
    if (isOpen) input.focus();
  }
  function signOut() {
    // Every identity this browser holds for this support site: revoked and removed.
    flushFeedback();
    for (const k of storedKeys()) forgetIdentity(k.slice(LS_PREFIX.length));
    provider = null;
    currentToken = null;
    st = { feedback: {} };
    identityKey = 'anon';
    switchTo('anon');
  }

  // ---------------------------------------------------------------- events
  launcher.addEventListener('click', toggle);
  closeBtn.addEventListener('click', close);
  newBtn.addEventListener('click', newConversation);
  handoffBtn.addEventListener('click', handoff);
  composer.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value;
    if (!text.trim() || busy || text.length > MAX_LEN) {
      if (text.length > MAX_LEN) showError(new WidgetError('too_large', t('errTooLong', { n: text.length, max: MAX_LEN })));
      return;
    }
    input.value = '';
    autosize();
    updateCounter();
    send(text);
  });
  function autosize() {
    input.style.height = 'auto';
    input.style.height = Math.min(input.scrollHeight + 2, 132) + 'px';
  }
  input.addEventListener('input', () => {
    autosize();
    updateCounter();
  });
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
    } else trapTab(e);
  });
  const onFocusIn = (e) => {
    // A modal panel keeps focus: tabbing or clicking out lands back in the composer.
    if (isModal() && e.target !== hostEl) input.focus({ preventScroll: true });
  };
  const onHostClick = (e) => {
    if (!cfg.launcher || !e.target || !e.target.closest) return;
    let hit = null;
    try {
      hit = e.target.closest(cfg.launcher);
    } catch (_) {
      return;
    }
    if (hit) {
      e.preventDefault();
      toggle();
    }
  };
  const onVisibility = () => schedulePoll();
  const onOnline = () => {
    pollFailures = 0;
    if (st.conversationId) pollOnce().then(schedulePoll);
  };
  const onPageHide = () => flushFeedback(true);
  const onStorage = (e) => {
    // Another tab of the same site changed this identity's state (new chat, sign-out).
    if (e.key === LS_PREFIX + identityKey && !busy) {
      const before = st.conversationId;
      load();
      if (st.conversationId !== before) {
        clearLog();
        if (st.conversationId && isOpen) restore();
      }
    }
  };
  const WINDOW_EVENTS = [['pagehide', onPageHide], ['storage', onStorage], ['online', onOnline]];
  const DOCUMENT_EVENTS = [['visibilitychange', onVisibility], ['focusin', onFocusIn], ['click', onHostClick]];

  // ---------------------------------------------------------------- host API
  const OPTION_KEYS = ['title', 'greeting', 'position', 'locale', 'hideLauncher', 'launcher', 'offsetX', 'offsetY', 'zIndex', 'accent', 'timeout'];
  function applyOptions(o) {
    if (!o || typeof o !== 'object') return;
    for (const k of OPTION_KEYS) {
      if (!(k in o)) continue;
      const v = o[k];
      if (k === 'title') cfg.title = String(v || 'Support');
      else if (k === 'greeting') cfg.greeting = v ? String(v) : null;
      else if (k === 'position') cfg.position = v === 'left' ? 'left' : 'right';
      else if (k === 'locale') cfg.locale = v ? String(v) : null;
      else if (k === 'hideLauncher') cfg.hideLauncher = !!v;
      else if (k === 'launcher') cfg.launcher = v ? String(v) : null;
      else if (k === 'offsetX' || k === 'offsetY') cfg[k] = num(v, cfg[k]);
      else if (k === 'zIndex') cfg.zIndex = num(v, cfg.zIndex);
      else if (k === 'accent') cfg.accent = String(v);
      else if (k === 'timeout') cfg.timeoutMs = num(v, cfg.timeoutMs);
    }
    if (o.offset && typeof o.offset === 'object') {
      cfg.offsetX = num(o.offset.x, cfg.offsetX);
      cfg.offsetY = num(o.offset.y, cfg.offsetY);
    }
    applyLook();
    const before = lang;
    setLang(chooseLang(st.customer && st.customer.locale));
    if (lang !== before && st.sessionToken && !st.customer && !st.conversationId) {
      // A visitor's language travels in their session: before the first question, a new
      // language means a new session (after it, the conversation keeps the one it began with).
      revoke(st.sessionToken);
      st.sessionToken = null;
      save();
    }
    applyLabels();
    syncLaunchers();
  }
  function identityOption(o) {
    if (!o || typeof o !== 'object') return undefined;
    if ('identity' in o) return o.identity;
    if ('identityToken' in o) return o.identityToken;
    return undefined;
  }
  function mount(identity) {
    document.body.append(hostEl);
    mounted = true;
    for (const [n, f] of WINDOW_EVENTS) window.addEventListener(n, f);
    for (const [n, f] of DOCUMENT_EVENTS) document.addEventListener(n, f);
    const initial = typeof identity === 'function' ? null : identity || null;
    currentToken = initial;
    provider = initial ? () => Promise.resolve(initial) : null;
    identityKey = identityKeyFor(initial);
    load();
    dropSessionIfTokenChanged(initial);
    lang = '';
    setLang(chooseLang(st.customer && st.customer.locale));
    clearLog();
    syncLaunchers();
    if (typeof identity === 'function') identify(identity);
    else if (initial || st.conversationId) {
      // Verify a signed-in customer at once (their name in the header, errors early), and
      // restore in the background so replies that arrived while away show as unread.
      const myGen = gen;
      (initial ? ensureSession() : Promise.resolve())
        .then(() => myGen === gen && st.conversationId && restore())
        .then(() => myGen === gen && schedulePoll())
        .catch((e) => myGen === gen && handleError(e, null));
    }
    emit('ready', { version: VERSION });
  }
  function boot(o) {
    if (!document.body) {
      document.addEventListener('DOMContentLoaded', () => boot(o), { once: true });
      return;
    }
    applyOptions(o);
    const identity = identityOption(o);
    if (!mounted) mount(identity === undefined ? (data.identityToken || '').trim() || null : identity);
    else if (identity !== undefined) identify(identity);
    if ((o && o.open) || (cfg.startOpen && !(o && o.open === false))) open();
  }
  function update(o) {
    if (!mounted) return boot(o);
    applyOptions(o);
    const identity = identityOption(o);
    return identity !== undefined ? identify(identity) : Promise.resolve(snapshot());
  }
  function shutdown() {
    // Sign out and unmount (single-page apps call this on logout; boot mounts it again).
    close();
    signOut();
    stopListening();
    clearTimeout(pollTimer);
    topLayer(launcher, false);
    hostEl.remove();
    mounted = false;
    for (const [n, f] of WINDOW_EVENTS) window.removeEventListener(n, f);
    for (const [n, f] of DOCUMENT_EVENTS) document.removeEventListener(n, f);
    applyModal();
    setUnread(0);
    emit('shutdown', {});
  }
  function on(name, fn) {
    if (typeof fn !== 'function') return () => {};
    (listeners[name] = listeners[name] || []).push(fn);
    return () => {
      listeners[name] = (listeners[name] || []).filter((f) => f !== fn);
    };
  }
  const commands = {
    boot,
    update,
    shutdown,
    open: () => open(),
    close: () => close(),
    toggle: () => toggle(),
    identify,
    reset: () => signOut(),
    newConversation: () => newConversation(),
    prefill(text) {
      // Text in the composer, not sent: the customer reads it, edits it and presses Send.
      open();
      input.value = String(text === undefined || text === null ? '' : text);
      autosize();
      updateCounter();
      input.focus({ preventScroll: true });
    },
    send(text) {
      open();
      return send(text);
    },
    setLocale(locale) {
      applyOptions({ locale });
    },
    hideLauncher(hidden) {
      applyOptions({ hideLauncher: hidden === undefined ? true : !!hidden });
    },
    showLauncher() {
      applyOptions({ hideLauncher: false });
    },
    on,
    onUnreadCountChange(fn) {
      return on('unreadCountChange', fn);
    },
    getState: () => snapshot(),
  };
  function Concierge(name) {
    const fn = commands[name];
    if (!fn) {
      console.warn(`Concierge: unknown command ${JSON.stringify(name)}`);
      return undefined;
    }
    return fn.apply(null, Array.prototype.slice.call(arguments, 1));
  }
  Object.assign(Concierge, commands, { __widget: true, version: VERSION });
  Object.defineProperty(Concierge, 'state', { get: snapshot });
  Object.defineProperty(Concierge, 'unreadCount', { get: () => unread });

  // ---------------------------------------------------------------- start
  // Replay what the host queued before this file arrived; boot with the script tag's data-*
  // unless the host asked to boot itself (data-boot="manual") or queued a boot/shutdown.
  const queued = (typeof window.Concierge === 'function' && Array.isArray(window.Concierge.q) && window.Concierge.q) || [];
  window.Concierge = Concierge;
  function start() {
    const calls = queued.map((args) => Array.prototype.slice.call(args));
    const selfBoots = calls.some((a) => a[0] === 'boot' || a[0] === 'shutdown');
    if (!selfBoots && data.boot !== 'manual') boot({});
    for (const args of calls) {
      try {
        Concierge.apply(null, args);
      } catch (e) {
        console.warn('Concierge: a queued call failed', e);
      }
    }
  }
  applyLook();
  if (document.body) start();
  else document.addEventListener('DOMContentLoaded', start, { once: true });
})();
