"""Browser-test plumbing: the real app served by uvicorn in a background thread, and Debian's
Chromium driven by Playwright (never `playwright install`: the browser comes from apt).

Test modules bind the fixtures by assignment (`live = browser_helpers.live`), so each module
gets its own app and store. Without Chromium the tests fail with a message saying how to get
it, unless CONCIERGE_SKIP_BROWSER=1.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("CONCIERGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ADMIN_TOKEN = "dev-admin-token"
READY_TIMEOUT_S = float(os.environ.get("CONCIERGE_READY_TIMEOUT", "240"))
T = TypeVar("T")


def require_browser() -> None:
    """Skip only when asked to; a missing browser is a failure that says what to do."""
    if os.environ.get("CONCIERGE_SKIP_BROWSER") == "1":
        pytest.skip("CONCIERGE_SKIP_BROWSER=1")
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}. Install Debian's build with "
            "`apt-get install -y chromium` (CI's .ci/run does), point CONCIERGE_CHROMIUM at "
            "another binary, or set CONCIERGE_SKIP_BROWSER=1 to skip the browser tests.",
            pytrace=False,
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail(
            "The `playwright` Python package is missing: install requirements-dev.txt "
            "(do not run `playwright install`; the tests use /usr/bin/chromium).",
            pytrace=False,
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveApp:
    """`create_app(settings)` on 127.0.0.1:<free port>, in a thread with its own event loop."""

    def __init__(self, **overrides: Any) -> None:
        import uvicorn

        from app.main import create_app
        from app.settings import Settings

        values: dict[str, Any] = {
            "mongodb_uri": None,
            "embedder": "fake",
            "seed_on_start": True,
            "demo": True,  # the demo console and its published dev secrets, on 127.0.0.1
        }
        values.update(overrides)
        self.settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
        self.app = create_app(self.settings)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws="none",
            lifespan="on",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._serve, name="concierge-live-app", daemon=True)
        self.http = httpx.Client(base_url=self.base_url, timeout=60)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve())

    def start(self) -> LiveApp:
        self.thread.start()
        deadline = time.monotonic() + READY_TIMEOUT_S
        last = "no answer"
        while time.monotonic() < deadline:
            if not self.thread.is_alive():
                raise RuntimeError("the app thread exited during start-up (see the log above)")
            with contextlib.suppress(httpx.HTTPError):
                r = self.http.get("/readyz")
                if r.status_code == 200:
                    return self
                last = r.text
            time.sleep(0.25)
        raise RuntimeError(f"/readyz not 200 after {READY_TIMEOUT_S:.0f}s: {last}")

    def stop(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(timeout=30)
        if not self.thread.is_alive():
            self.loop.close()

    @property
    def services(self) -> Any:
        return self.app.state.services

    @property
    def store(self) -> Any:
        return self.app.state.services.store

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        """Run a coroutine (e.g. a store read) on the app's own loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    # --- API shortcuts used to set up scenarios -----------------------------------------
    def admin(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        return self.http.request(method, path, headers=headers, **kw)

    def demo_customers(self) -> list[dict[str, Any]]:
        r = self.http.get("/v1/demo/customers")
        r.raise_for_status()
        customers: list[dict[str, Any]] = r.json()["customers"]
        return customers

    def customer(self, plan: str) -> dict[str, Any]:
        """The first English customer on `plan` ("unknown" = a plan outside the ladder)."""
        known = {"free", "pro", "enterprise"}
        for c in self.demo_customers():
            on_plan = c["plan"] not in known if plan == "unknown" else c["plan"] == plan
            if on_plan and c.get("locale", "en") == "en":
                return c
        raise LookupError(f"no demo customer on plan {plan!r}")

    def session(self, identity_token: str | None = None) -> str:
        body = {"identityToken": identity_token} if identity_token else {}
        r = self.http.post("/v1/sessions", json=body)
        r.raise_for_status()
        token: str = r.json()["sessionToken"]
        return token

    def ask(self, session: str, conversation_id: str, content: str) -> dict[str, Any]:
        r = self.http.post(
            f"/v1/conversations/{conversation_id}/messages",
            json={"content": content},
            headers={"Authorization": f"Bearer {session}", "Accept": "application/json"},
        )
        r.raise_for_status()
        data: dict[str, Any] = r.json()
        return data

    def new_conversation(self, session: str) -> str:
        r = self.http.post(
            "/v1/conversations", json={}, headers={"Authorization": f"Bearer {session}"}
        )
        r.raise_for_status()
        cid: str = r.json()["id"]
        return cid


def live_app_fixture() -> Iterator[LiveApp]:
    require_browser()
    app = LiveApp().start()
    try:
        yield app
    finally:
        app.stop()


def browser_fixture() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


live = pytest.fixture(scope="module", name="live")(live_app_fixture)
browser = pytest.fixture(scope="module", name="browser")(browser_fixture)


@pytest.fixture(name="page")
def page_fixture(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh context (empty localStorage) per test; a failure screenshot is kept."""
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(20_000)
    context.add_init_script(RECORD_CSP_VIOLATIONS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # Chromium reports each Content-Security-Policy violation on the console: count it as an error
    page.on(
        "console",
        lambda msg: (
            errors.append(f"CSP: {msg.text}") if "Content Security Policy" in msg.text else None
        ),
    )
    JS_ERRORS[id(page)] = errors
    failed_before = request.session.testsfailed
    try:
        yield page
    finally:
        if request.session.testsfailed > failed_before:
            with contextlib.suppress(Exception):
                shot(page, f"FAILED-{request.node.name}")
        JS_ERRORS.pop(id(page), None)
        context.close()


JS_ERRORS: dict[int, list[str]] = {}
# Every page records `securitypolicyviolation` events (the served pages carry a strict CSP).
RECORD_CSP_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
});
"""


def js_errors(page: Any) -> list[str]:
    """Uncaught exceptions and CSP violations the page has produced so far."""
    return JS_ERRORS.get(id(page), [])


def csp_violations(page: Any) -> list[str]:
    """`securitypolicyviolation` events seen by the current document."""
    return list(page.evaluate("() => window.__cspViolations || []"))


def shot(page: Any, name: str, full_page: bool = False) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


# --- widget helpers (Playwright's CSS selectors pierce the open shadow root) ---------------
WIDGET = "#concierge-widget"


def demo_settled(page: Any) -> None:
    """The /demo console has applied its own starting identity (it does so once its customer
    list arrives): only after this may a test call `Concierge.identify` without a race."""
    page.wait_for_function(
        """() => window.Concierge && /^(Session:|Signed in)/.test(
            (document.querySelector('#session-status') || {}).textContent || '')"""
    )


def open_widget(page: Any) -> None:
    page.wait_for_function("() => window.Concierge && window.Concierge.__widget")
    page.locator(f"{WIDGET} .launcher").click()
    page.locator(f"{WIDGET} #cg-panel").wait_for(state="visible")


def ask_in_widget(page: Any, text: str, timeout: float = 60_000) -> Any:
    """Type and send; wait for the turn to finish; return the finished assistant message."""
    before = page.locator(f"{WIDGET} .msg.assistant[data-id]").count()
    page.locator(f"{WIDGET} #cg-input").fill(text)
    page.locator(f"{WIDGET} #cg-input").press("Enter")
    page.wait_for_function(
        """n => {
            const root = document.querySelector('#concierge-widget').shadowRoot;
            return root.querySelectorAll('.msg.assistant[data-id]').length > n
                && !root.querySelector('.msg.streaming');
        }""",
        arg=before,
        timeout=timeout,
    )
    return page.locator(f"{WIDGET} .msg.assistant[data-id]").last


def widget_state(page: Any) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate("() => window.Concierge.state")
    return state
