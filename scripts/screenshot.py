"""The README's screenshot of the demo console, taken from a running server.

    make run   # in another shell (or ARTICLES_DIR=… make run), then:
    python -m scripts.screenshot [--base http://127.0.0.1:8000] [--out docs/img/demo-console.png]

Drives Debian's Chromium (`sh scripts/ensure_chromium.sh` installs it) headless through
Playwright: signs in as the demo's Enterprise customer, asks two preset questions (one answered
from the docs, one from the customer's subscription), waits for both turns to finish, scrolls the
console to its per-turn inspection and saves the page. Nothing is staged: what the
picture shows is what the server answered.
"""

from __future__ import annotations

import argparse
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ("How long are audit logs kept?", "When does my subscription renew?")
SCROLL_TO_TURNS = (
    "() => { const c = document.querySelector('.console');"
    " c.scrollTop = document.querySelector('#turns').offsetTop - 70; }"
)
FINISHED = "n => document.querySelectorAll('#turns .turn:not(.pending)').length >= n"


def wait_ready(base: str, timeout_s: float = 900.0) -> None:
    """Block until /readyz says the corpus is searchable (a screenshot of a cold server lies)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=10) as response:
                if response.status == 200:
                    return
        except OSError:
            pass  # 503 while ingesting, or not listening yet
        if time.monotonic() > deadline:
            raise SystemExit(f"{base}/readyz did not turn 200 within {timeout_s:.0f} s")
        time.sleep(5)


def take(base: str, out: Path, width: int = 1440, height: int = 960) -> None:
    """Ask the preset questions in the demo console and save the page as a PNG."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(120_000)
            page.goto(f"{base}/demo")
            page.wait_for_function(
                "() => window.Concierge && document.querySelectorAll('#customer option').length > 1"
            )
            page.locator("[data-preset=enterprise]").click()
            page.locator("#session-status", has_text="plan enterprise").wait_for()
            for n, question in enumerate(QUESTIONS, start=1):
                page.locator(f"[data-ask='{question}']").click()
                page.wait_for_function(FINISHED, arg=n)
            page.evaluate(SCROLL_TO_TURNS)
            page.wait_for_timeout(500)  # the widget's last paint after the stream ends
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.screenshot", description=__doc__)
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "demo-console.png")
    args = parser.parse_args(argv)
    base = args.base.rstrip("/")
    wait_ready(base)
    take(base, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
