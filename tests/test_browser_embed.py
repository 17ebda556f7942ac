"""The widget as a host developer embeds it: a page on a second origin (127.0.0.1, another
port) with a strict CSP of its own (`script-src 'self' <concierge>`, no inline, no eval),
Trusted Types enforced, and hostile CSS (`body * { all: unset }`, a max z-index header).

Each numbered defect of issue 18 is reproduced here and shown fixed; every test ends with
no CSP violation and no console error. Screenshots land in test-artifacts/embed-*.png.
"""

from __future__ import annotations

import contextlib
import html
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import browser_helpers as bh
import httpx
import jwt
import pytest
from browser_helpers import WIDGET, shot, widget_state

from app.identity import mint_identity

pytestmark = pytest.mark.browser

browser = bh.browser

HOSTILE_CSS = """
body * { all: unset !important; }
header.site { display: block !important; position: fixed !important; top: 0 !important;
  left: 0 !important; right: 0 !important; height: 64px !important; z-index: 2147483647 !important;
  background: #1f2937 !important; color: #fff !important; }
main { display: block !important; height: 3000px !important; padding: 80px 16px 0 !important; }
button#help { display: inline-block !important; border: 1px solid #fff !important;
  padding: 4px 8px !important; }
"""

# The host's own script: the documented one-line stub, then whatever the page was asked to
# queue (calls made before widget.js has arrived).
HOST_JS = """
window.Concierge = window.Concierge ||
  function () { (Concierge.q = Concierge.q || []).push(arguments); };
window.__events = [];
for (const name of ['ready', 'open', 'close', 'identity', 'turn', 'message', 'escalated', 'error',
                    'unreadCountChange', 'shutdown']) {
  document.addEventListener('concierge:' + name,
    (e) => window.__events.push({ name, detail: e.detail }));
}
const calls = JSON.parse(document.documentElement.dataset.calls || '[]');
for (const c of calls) Concierge.apply(null, c);
"""

WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));
"""


class Host:
    """A customer's website on its own origin, serving one page shape per query string."""

    def __init__(self, concierge: str) -> None:
        self.concierge = concierge
        self.port = bh.free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        host = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path == "/host.js":
                    self.reply(HOST_JS, "text/javascript")
                elif url.path == "/hostile.css":
                    self.reply(HOSTILE_CSS, "text/css")
                elif url.path == "/favicon.ico":
                    self.send_response(204)
                    self.end_headers()
                elif url.path in ("/", "/other"):
                    self.reply(host.page(parse_qs(url.query)), "text/html", csp=True)
                else:
                    self.send_error(404)

            def reply(self, body: str, ctype: str, csp: bool = False) -> None:
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", f"{ctype}; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                if csp:
                    self.send_header("Content-Security-Policy", host.csp())
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def csp(self) -> str:
        c = self.concierge
        return (
            f"default-src 'none'; script-src 'self' {c}; connect-src {c}; style-src 'self'; "
            f"img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            "require-trusted-types-for 'script'; trusted-types 'none'"
        )

    def page(self, q: dict[str, list[str]]) -> str:
        lang = q.get("lang", ["en"])[0]
        direction = q.get("dir", ["ltr"])[0]
        calls = q.get("calls", ["[]"])[0]
        attrs = q.get("attrs", ["{}"])[0]
        extra = " ".join(
            f'data-{html.escape(k)}="{html.escape(str(v))}"' for k, v in json.loads(attrs).items()
        )
        return f"""<!doctype html><html lang="{html.escape(lang)}" dir="{html.escape(direction)}"
data-calls="{html.escape(calls)}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme shop</title><link rel="stylesheet" href="/hostile.css">
<script src="/host.js"></script>
<script src="{self.concierge}/widget.js" {extra} defer></script></head>
<body><header class="site">Acme shop <button id="help" type="button">Help</button></header>
<main><h1>Products</h1><p>Everything you need.</p><a href="/other">Another page</a></main>
</body></html>"""

    def url(self, path: str = "/", **q: Any) -> str:
        params = httpx.QueryParams(
            {k: json.dumps(v) if not isinstance(v, str) else v for k, v in q.items()}
        )
        return f"{self.origin}{path}?{params}"

    def start(self) -> Host:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[bh.LiveApp, Host]]:
    bh.require_browser()
    host = Host("")
    # The app allows exactly the host's origin, as a production allow-list would.
    live = bh.LiveApp(cors_origins=[host.origin]).start()
    host.concierge = live.base_url
    host.start()
    try:
        yield live, host
    finally:
        host.stop()
        live.stop()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.add_init_script(WATCH)
    console: list[str] = []
    page.on(
        "console",
        lambda m: (
            console.append(f"{m.text} @ {m.location.get('url', '')}") if m.type == "error" else None
        ),
    )
    page.on("pageerror", lambda e: console.append(f"uncaught: {e}"))
    page.__console = console  # type: ignore[attr-defined]
    failed_before = request.session.testsfailed
    try:
        yield page
    finally:
        if request.session.testsfailed > failed_before:
            with contextlib.suppress(Exception):
                shot(page, f"FAILED-{request.node.name}")
        context.close()


def assert_clean(page: Any, allow_failed_requests: bool = False) -> None:
    """No CSP or Trusted Types violation, no console error (a test that breaks requests on
    purpose may see the browser's own "Failed to load resource" lines, nothing else)."""
    assert page.evaluate("() => window.__violations") == []
    errors = [
        e
        for e in page.__console
        if not (allow_failed_requests and e.startswith("Failed to load resource"))
    ]
    assert errors == []


def token(live: bh.LiveApp, sub: str | int, **claims: Any) -> str:
    """What the host's backend signs: `sub` (a string or an integer) plus profile claims."""
    secret = live.settings.identity_secret.get_secret_value()
    if not claims and isinstance(sub, str):
        return mint_identity(sub, secret)
    now = datetime.now(UTC)
    body = {"sub": sub, "iat": now, "exp": now + timedelta(minutes=30), **claims}
    return jwt.encode(body, secret, algorithm="HS256")


def boot_page(
    page: Any, host: Host, calls: list[Any] | None = None, path: str = "/", **q: Any
) -> None:
    attrs = q.pop("attrs", {"boot": "manual"})
    page.goto(host.url(path, calls=calls or [["boot", {}]], attrs=attrs, **q))
    page.wait_for_function("() => window.Concierge && window.Concierge.__widget")
    page.wait_for_function("() => document.querySelector('#concierge-widget')")


def open_panel(page: Any) -> None:
    page.locator(f"{WIDGET} .launcher").click()
    page.locator(f"{WIDGET} #cg-panel").wait_for(state="visible")


def ask(page: Any, text: str) -> Any:
    return bh.ask_in_widget(page, text)


def events(page: Any, name: str) -> list[Any]:
    return [e["detail"] for e in page.evaluate("() => window.__events") if e["name"] == name]


ROOT_JS = "document.querySelector('#concierge-widget').shadowRoot"


# ---------------------------------------------------------------- 1. Trusted Types, the queue
def test_loads_under_trusted_types_and_replays_the_queue(sites: Any, page: Any) -> None:
    _live, host = sites
    calls = [
        ["on", "ready", None],  # not a function: ignored, no error
        ["boot", {"title": "Acme Help", "accent": "#0b5fff"}],
        ["prefill", "Where is my order?"],
    ]
    boot_page(page, host, calls)
    shot(page, "embed-host-page-open-prefilled")
    # Queued before widget.js existed: booted with the options, then the prefill ran.
    assert page.locator(f"{WIDGET} #cg-title").inner_text() == "Acme Help"
    assert page.locator(f"{WIDGET} #cg-input").input_value() == "Where is my order?"
    assert widget_state(page)["conversationId"] is None  # prefill never sends
    page.locator(f"{WIDGET} .hbtn.close").click()
    page.locator(f"{WIDGET} #cg-panel").wait_for(state="hidden")
    shot(page, "embed-host-page-closed")
    # The icons are real SVG nodes, built without any HTML parsing.
    assert page.evaluate(f"() => {ROOT_JS}.querySelectorAll('svg path').length") >= 3
    open_panel(page)
    answer = ask(page, "How do I reset my password?")
    assert answer.locator("a.cite").count() >= 1
    shot(page, "embed-host-page-answer")
    assert_clean(page)


# ---------------------------------------------------------------- host API
def test_host_api_launcher_offsets_locale_and_events(sites: Any, page: Any) -> None:
    _live, host = sites
    calls = [["boot", {"launcher": "#help", "offset": {"x": 40, "y": 100}, "zIndex": 1000}]]
    boot_page(page, host, calls)
    # The host's own button replaces ours, and says what it controls.
    assert page.locator(f"{WIDGET} .launcher").is_hidden()
    page.locator("#help").click()
    page.locator(f"{WIDGET} #cg-panel").wait_for(state="visible")
    assert page.locator("#help").get_attribute("aria-expanded") == "true"
    page.keyboard.press("Escape")
    page.locator(f"{WIDGET} #cg-panel").wait_for(state="hidden")
    assert page.evaluate("() => document.activeElement.id") == "help"  # focus went back
    page.evaluate("() => Concierge('update', { launcher: null })")
    box = page.locator(f"{WIDGET} .launcher").bounding_box()
    assert box["x"] + box["width"] == 1280 - 40 and box["y"] + box["height"] == 860 - 100
    page.evaluate("() => Concierge('hideLauncher')")
    assert page.locator(f"{WIDGET} .launcher").is_hidden()
    page.evaluate("() => Concierge('setLocale', 'fr-CA')")
    assert page.locator(f"{WIDGET} #cg-input").get_attribute("placeholder") == "Posez une question…"
    page.evaluate("() => Concierge('open')")
    assert events(page, "open") and widget_state(page)["locale"] == "fr"
    page.evaluate("() => Concierge('close')")
    assert events(page, "close")
    assert_clean(page)


# ---------------------------------------------------------------- 2. a server that never answers
def test_a_request_the_server_never_answers_times_out(sites: Any, page: Any) -> None:
    _live, host = sites
    hung: list[Any] = []
    page.route(
        "**/v1/conversations/*/messages",
        lambda r: hung.append(r) if r.request.method == "POST" else r.continue_(),
    )
    boot_page(page, host, [["boot", {"timeout": 2500}]])
    open_panel(page)
    page.locator(f"{WIDGET} #cg-input").fill("How do I export bookings?")
    page.locator(f"{WIDGET} #cg-input").press("Enter")
    alert = page.locator(f"{WIDGET} [role=alert]")
    alert.wait_for(timeout=10_000)
    assert "taking too long" in alert.inner_text()
    assert not page.locator(f"{WIDGET} .send").is_disabled()  # not busy forever
    assert widget_state(page)["busy"] is False
    page.unroute("**/v1/conversations/*/messages")
    alert.locator("[data-retry]").click()
    page.locator(f"{WIDGET} .msg.assistant[data-id]").wait_for(timeout=60_000)
    assert len(hung) == 1
    assert_clean(page, allow_failed_requests=True)


# ---------------------------------------------------------------- 3. unread across pages
def test_agent_reply_while_on_another_page_is_unread(sites: Any, page: Any) -> None:
    live, host = sites
    boot_page(page, host)
    open_panel(page)
    page.locator(f"{WIDGET} .handoff").click()
    case_ref = page.locator(f"{WIDGET} .notice.escalation").get_attribute("data-case-ref")
    page.keyboard.press("Escape")
    page.goto(host.url("/other", calls=[["boot", {}]], attrs={"boot": "manual"}))  # elsewhere
    page.wait_for_function("() => window.Concierge && window.Concierge.__widget")
    live.admin(
        "POST",
        f"/v1/admin/escalations/{case_ref}/reply",
        json={"agent": "Ana", "content": "Your refund is on its way."},
    )
    boot_page(page, host)  # the customer comes back to the page with the widget
    badge = page.locator(f"{WIDGET} .badge")
    badge.wait_for()
    assert badge.inner_text() == "1"
    assert page.evaluate("() => Concierge.unreadCount") == 1
    assert events(page, "unreadCountChange")[-1] == {"count": 1}
    assert events(page, "message")[-1]["role"] == "agent"
    open_panel(page)
    assert badge.is_hidden() and events(page, "unreadCountChange")[-1] == {"count": 0}
    # Read is recorded on the server too (the count survives this browser's storage).
    conv = widget_state(page)["conversationId"]
    last = page.locator(f"{WIDGET} .msg.agent").get_attribute("data-seq")
    for _ in range(50):
        stored = live.run(live.store.conversations.get(conv))
        if stored.read_seq == int(last):
            break
        page.wait_for_timeout(100)
    assert stored.read_seq == int(last)
    assert_clean(page)


# ---------------------------------------------------------------- 4. contrast for any colour
@pytest.mark.parametrize(
    ("accent", "text"),
    [
        ("gold", "rgb(17, 24, 39)"),
        ("#e4007c", "rgb(255, 255, 255)"),
        ("hsl(48 100% 50%)", "rgb(17, 24, 39)"),
        ("rgb(11 95 255)", "rgb(255, 255, 255)"),
        ("oklch(0.9 0.1 100)", "rgb(17, 24, 39)"),
        ("#7f7f7f", "rgb(0, 0, 0)"),  # a mid-tone: only black reaches 4.5:1
    ],
)
def test_text_on_the_accent_meets_wcag_aa(sites: Any, page: Any, accent: str, text: str) -> None:
    _live, host = sites
    boot_page(page, host, [["boot", {"accent": accent}]])
    launcher = page.locator(f"{WIDGET} .launcher")
    assert launcher.evaluate("b => getComputedStyle(b).color") == text
    ratio = float(page.locator(f"{WIDGET} .root").get_attribute("data-on-accent-ratio"))
    assert ratio >= 4.5
    assert_clean(page)


# ---------------------------------------------------------------- 5. direction
def test_rtl_page_and_arabic_messages_read_correctly(sites: Any, page: Any) -> None:
    _live, host = sites
    boot_page(page, host, lang="ar", dir="rtl")
    open_panel(page)
    # The widget's chrome is whole (left-to-right labels, panel bottom-right), not half-mirrored.
    assert page.locator(f"{WIDGET} .root").get_attribute("dir") == "ltr"
    box = page.locator(f"{WIDGET} #cg-panel").bounding_box()
    assert box["x"] > 640
    ask(page, "كيف أعيد تعيين كلمة المرور؟")
    user = page.locator(f"{WIDGET} .msg.user .bubble").last
    assert user.evaluate("b => getComputedStyle(b).direction") == "rtl"
    assert page.locator(f"{WIDGET} #cg-input").get_attribute("dir") == "auto"
    shot(page, "embed-rtl-page")
    assert_clean(page)


# ------------------------------------------------ 6. sign-out, 13. unknown customer, 7. token rules
def test_signing_out_revokes_and_forgets_the_customer(sites: Any, page: Any) -> None:
    live, host = sites
    identity = token(
        live, "shop-user-501", name="Maya Lindqvist", email="maya@example.com", plan="pro"
    )
    boot_page(page, host, [["boot", {"identity": identity}]])
    open_panel(page)
    page.locator(f"{WIDGET} #cg-sub", has_text="Maya Lindqvist").wait_for()  # created from claims
    ask(page, "How do I invite users?")
    conv = widget_state(page)["conversationId"]
    stored = page.evaluate(
        "() => Object.entries(localStorage).filter(([k]) => k.startsWith('concierge:'))"
    )
    session = next(
        json.loads(v)["sessionToken"] for k, v in stored if k.endswith(":sub:shop-user-501")
    )
    auth = {"Authorization": f"Bearer {session}"}
    assert live.http.get(f"/v1/conversations/{conv}", headers=auth).status_code == 200

    page.evaluate("() => Concierge.identify(null)")
    assert widget_state(page)["customer"] is None
    left = page.evaluate(
        "() => Object.keys(localStorage).filter((k) => k.includes('shop-user-501'))"
    )
    assert left == []

    def revoked() -> bool:  # the revoke request is fire-and-forget: give it a moment
        return live.http.get(f"/v1/conversations/{conv}", headers=auth).status_code == 401

    for _ in range(50):
        if revoked():
            break
        page.wait_for_timeout(100)
    assert revoked()

    # shutdown: every stored identity gone, the widget unmounted; boot mounts it again.
    page.evaluate("() => Concierge('shutdown')")
    assert page.locator(WIDGET).count() == 0
    assert (
        page.evaluate("() => Object.keys(localStorage).filter((k) => k.startsWith('concierge:'))")
        == []
    )
    page.evaluate("() => Concierge('boot', {})")
    page.locator(f"{WIDGET} .launcher").wait_for()
    assert_clean(page)


def test_numeric_sub_with_audience_and_a_german_customer(sites: Any, page: Any) -> None:
    live, host = sites
    identity = token(live, 90210, aud="acme-support", name="Jonas Weber", locale="de-DE")
    boot_page(page, host, [["boot", {"identity": identity}]])
    open_panel(page)
    page.locator(f"{WIDGET} #cg-sub", has_text="Angemeldet als Jonas Weber").wait_for()
    assert page.locator(f"{WIDGET} .handoff").inner_text() == "Mit einem Menschen sprechen"
    assert page.locator(f"{WIDGET} .root").get_attribute("lang") == "de"
    shot(page, "embed-german-customer")
    assert_clean(page)


def test_french_customer_gets_french_labels(sites: Any, page: Any) -> None:
    live, host = sites
    identity = token(live, "client-fr-7", name="Camille Martin", locale="fr")
    boot_page(page, host, [["boot", {"identity": identity}]])
    open_panel(page)
    page.locator(f"{WIDGET} #cg-sub", has_text="Connecté en tant que Camille Martin").wait_for()
    assert page.locator(f"{WIDGET} #cg-input").get_attribute("placeholder") == "Posez une question…"
    shot(page, "embed-french-customer")
    assert_clean(page)


# ---------------------------------------------------------------- 9. answers with structure
RICH = (
    "Steps:\n\n1. Open *Settings* and choose _Export_\n   - pick CSV\n   - or JSON\n"
    "2. Run the command below\n\n```\nharbor export --all\n```\n\n"
    "| Format | Size |\n|---|---|\n| CSV | small |\n| JSON | larger |\n\nDone **now** [1]"
)


def sse_reply(content: str) -> str:
    message = {
        "id": "a-rich",
        "seq": 2,
        "role": "assistant",
        "content": content,
        "createdAt": "2026-01-01T00:00:00+00:00",
        "meta": {
            "confidence": "strong",
            "citations": [{"n": 1, "title": "Exports", "url": "/help/exports", "kind": "doc"}],
        },
    }
    meta = {"userMessage": {"id": "u-rich", "seq": 1}, "confidence": "strong", "escalated": False}
    return (
        f"event: meta\ndata: {json.dumps(meta)}\n\n"
        f"event: delta\ndata: {json.dumps({'text': content})}\n\n"
        f"event: done\ndata: {json.dumps({'message': message})}\n\n"
    )


def test_code_blocks_tables_emphasis_and_nested_lists(sites: Any, page: Any) -> None:
    _live, host = sites
    page.route(
        "**/v1/conversations/*/messages",
        lambda r: (
            r.fulfill(
                status=200,
                headers={"content-type": "text/event-stream", "access-control-allow-origin": "*"},
                body=sse_reply(RICH),
            )
            if r.request.method == "POST"
            else r.continue_()
        ),
    )
    boot_page(page, host)
    open_panel(page)
    answer = ask(page, "How do I export?")
    bubble = answer.locator(".bubble")
    assert bubble.locator("pre code").inner_text() == "harbor export --all"
    assert bubble.locator("table th").all_inner_texts() == ["Format", "Size"]
    assert bubble.locator("table tbody tr").count() == 2
    assert bubble.locator("em").all_inner_texts() == ["Settings", "Export"]
    assert bubble.locator("strong").inner_text() == "now"
    top = bubble.locator(":scope > ol")
    assert top.count() == 1 and top.locator(":scope > li").count() == 2  # numbering continues
    assert top.locator(":scope > li").first.locator("ul > li").all_inner_texts() == [
        "pick CSV",
        "or JSON",
    ]
    assert "`" not in bubble.inner_text() and "|" not in bubble.inner_text()
    shot(page, "embed-rich-answer")
    assert_clean(page)


# ---------------------------------------------------------------- 10. long pastes
def test_an_over_long_paste_is_counted_not_truncated(sites: Any, page: Any) -> None:
    _live, host = sites
    posts: list[Any] = []
    page.on(
        "request",
        lambda r: posts.append(r) if r.method == "POST" and r.url.endswith("/messages") else None,
    )
    boot_page(page, host)
    open_panel(page)
    box = page.locator(f"{WIDGET} #cg-input")
    box.fill("x" * 4500)
    assert len(box.input_value()) == 4500
    counter = page.locator(f"{WIDGET} #cg-counter")
    assert "4500 / 4000" in counter.inner_text() and "500" in counter.inner_text()
    assert page.locator(f"{WIDGET} .send").is_disabled()
    box.press("Enter")
    assert "too long" in page.locator(f"{WIDGET} [role=alert]").inner_text()
    assert posts == [] and len(box.input_value()) == 4500  # nothing lost, nothing sent
    box.fill("x" * 3999)
    assert not page.locator(f"{WIDGET} .send").is_disabled()
    assert_clean(page)


# ---------------------------------------------------------------- 11. the phone modal
def test_phone_panel_is_modal_above_a_max_z_index_header(sites: Any, page: Any) -> None:
    _live, host = sites
    page.set_viewport_size({"width": 375, "height": 740})
    boot_page(page, host)
    open_panel(page)
    assert page.locator(f"{WIDGET} #cg-panel").bounding_box() == {
        "x": 0,
        "y": 0,
        "width": 375,
        "height": 740,
    }
    assert page.locator(f"{WIDGET} #cg-panel").get_attribute("aria-modal") == "true"
    # The close button is what a tap at its place hits, although the host header is there.
    close = page.locator(f"{WIDGET} .hbtn.close")
    b = close.bounding_box()
    hit = page.evaluate(
        f"([x, y]) => {{ const e = {ROOT_JS}.elementFromPoint(x, y);"
        " const b = e && e.closest('button'); return b && b.className; }",
        [b["x"] + b["width"] / 2, b["y"] + b["height"] / 2],
    )
    assert hit == "hbtn close"
    # Focus stays inside: Tab from the last control wraps to the first, and back.
    for _ in range(12):
        page.keyboard.press("Tab")
        assert (
            page.evaluate("() => document.activeElement && document.activeElement.id")
            == "concierge-widget"
        )
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.activeElement.id") == "concierge-widget"
    # The page behind does not scroll.
    assert page.evaluate("() => getComputedStyle(document.documentElement).overflow") == "hidden"
    page.mouse.wheel(0, 800)
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.scrollY") == 0
    shot(page, "embed-375px-modal")
    close.click()
    page.locator(f"{WIDGET} #cg-panel").wait_for(state="hidden")
    assert page.evaluate("() => getComputedStyle(document.documentElement).overflow") != "hidden"
    assert_clean(page)


# ---------------------------------------------------------------- 12. an anonymous German visitor
async def article_locale(live: bh.LiveApp, doc_id: str) -> str | None:
    doc = await live.store.db["kb_articles"].find_one({"_id": doc_id})
    return None if doc is None else str(doc["locale"])


def test_anonymous_german_visitor_gets_german_labels_and_articles(sites: Any, page: Any) -> None:
    live, host = sites
    boot_page(page, host, lang="de")
    open_panel(page)
    assert (
        page.locator(f"{WIDGET} #cg-input").get_attribute("placeholder")
        == "Stellen Sie eine Frage…"
    )
    answer = ask(page, "Wie setze ich mein Passwort zurück?")
    # Retrieval ran on the German articles (the visitor's language), not English only.
    conv = widget_state(page)["conversationId"]
    stored = live.run(live.store.messages.get(conv, answer.get_attribute("data-id")))
    titles = {p["title"] for p in stored.meta["passages"] if p["kind"] == "doc"}
    assert "Passwort zurücksetzen" in titles
    locales = {
        live.run(article_locale(live, p["docId"]))
        for p in stored.meta["passages"]
        if p["kind"] == "doc"
    }
    assert locales == {"de"}
    shot(page, "embed-german-visitor")
    assert_clean(page)


def test_a_visitor_who_switches_language_before_asking_gets_that_language(
    sites: Any, page: Any
) -> None:
    live, host = sites
    boot_page(page, host, lang="en")
    open_panel(page)
    ask(page, "How do I reset my password?")
    page.locator(f"{WIDGET} .hbtn:not(.close)").click()  # a new conversation, same session
    page.evaluate("() => Concierge('setLocale', 'de')")
    answer = ask(page, "Wie setze ich mein Passwort zurück?")
    conv = widget_state(page)["conversationId"]
    stored = live.run(live.store.messages.get(conv, answer.get_attribute("data-id")))
    docs = [p for p in stored.meta["passages"] if p["kind"] == "doc"]
    assert {live.run(article_locale(live, p["docId"])) for p in docs} == {"de"}
    assert_clean(page)


# ---------------------------------------------------------------- 14. networking and privacy
def test_typing_at_once_long_answers_from_the_start_and_no_trace_broadcast(
    sites: Any, page: Any
) -> None:
    _live, host = sites
    long_answer = "\n\n".join(f"Step {i}: do the thing number {i} carefully." for i in range(1, 60))
    release = threading.Event()

    def slow(route: Any) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        release.wait(10)
        route.fulfill(
            status=200,
            headers={"content-type": "text/event-stream", "access-control-allow-origin": "*"},
            body=sse_reply(long_answer),
        )

    page.route("**/v1/conversations/*/messages", slow)
    boot_page(page, host)
    open_panel(page)
    page.locator(f"{WIDGET} #cg-input").fill("Tell me everything")
    page.locator(f"{WIDGET} #cg-input").press("Enter")
    page.locator(f"{WIDGET} .msg.streaming .typing").wait_for(timeout=2_000)  # before any byte
    release.set()
    answer = page.locator(f'{WIDGET} .msg.assistant[data-id="a-rich"]')
    answer.wait_for()
    page.wait_for_timeout(300)
    offset = answer.evaluate(
        "(el) => el.getBoundingClientRect().top - el.parentElement.getBoundingClientRect().top"
    )
    assert 0 <= offset <= 40  # the answer's first line is in view, not its end
    # Every event the host page saw: nothing of the trace (sentiment, passages, intent).
    seen = json.dumps(page.evaluate("() => window.__events"))
    for word in ("sentiment", "passages", "intent", "condensedQuestion"):
        assert word not in seen
    assert_clean(page)


def test_a_persons_reply_is_pushed_over_the_open_stream(sites: Any, page: Any) -> None:
    live, host = sites
    boot_page(page, host)
    open_panel(page)
    page.locator(f"{WIDGET} .handoff").click()
    case_ref = page.locator(f"{WIDGET} .notice.escalation").get_attribute("data-case-ref")
    page.wait_for_function("() => window.Concierge.state.live")
    gets: list[Any] = []
    page.on(
        "request",
        lambda r: gets.append(r) if r.method == "GET" and "/messages?after=" in r.url else None,
    )
    live.admin(
        "POST",
        f"/v1/admin/escalations/{case_ref}/reply",
        json={"agent": "Ana", "content": "Hi, Ana here."},
    )
    page.locator(f"{WIDGET} .msg.agent").wait_for(timeout=10_000)
    # No JSON polling: the reply came down the event stream that was already open (a stream
    # that happened to end meanwhile is reopened as a stream too).
    assert all(r.headers.get("accept") == "text/event-stream" for r in gets)
    assert_clean(page)


def test_a_failing_server_is_retried_less_and_less_often(sites: Any, page: Any) -> None:
    _live, host = sites
    boot_page(page, host)
    open_panel(page)
    ask(page, "How do I reset my password?")
    page.wait_for_function("() => window.Concierge.state.live")
    failures: list[str] = []

    def down(route: Any) -> None:
        failures.append(route.request.url)
        route.fulfill(
            status=503,
            headers={"access-control-allow-origin": "*", "content-type": "application/json"},
            body='{"detail": "down"}',
        )

    page.route("**/v1/conversations/*/messages?after=*", down)
    page.evaluate("() => { Concierge('close'); Concierge('open'); }")  # a fresh stream
    page.wait_for_function("() => window.Concierge.state.pollDelayMs >= 12000", timeout=30_000)
    assert len(failures) == 3  # then waits of 3 s and 6 s; the next wait is 12 s, up to 60 s
    page.unroute("**/v1/conversations/*/messages?after=*")
    page.evaluate("() => window.dispatchEvent(new Event('online'))")  # back: at once
    page.wait_for_function("() => window.Concierge.state.live")
    assert_clean(page, allow_failed_requests=True)
