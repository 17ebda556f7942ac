"""GitBook's Markdown (Git Sync export) normalised at load: one row per construct, input → exact
Markdown. Every input is made up for the test; the links resolve against a small folder."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from app.ingest.dialects import normalise
from app.ingest.leaks import find_leaks
from app.ingest.pagelinks import SiteLinks
from tests.apihelp import running_app

RAW = re.compile(r"\{%|%\}|\{\{(?!\s*team)|:rocket:|:check:|&#xNAN;|data-view|&lt;table")

CARDS = (
    '<table data-view="cards"><thead><tr><th></th><th></th><th></th>'
    '<th data-hidden data-card-target data-type="content-ref"></th>'
    '<th data-hidden data-card-cover data-type="files"></th></tr></thead><tbody>'
    '<tr><td><h4><i class="fa-rocket">:rocket:</i></h4></td><td><strong>Starter</strong></td>'
    "<td><ul><li>Two boards</li><li>Email help</li></ul></td>"
    '<td><a href="plans/starter.md">Starter</a></td>'
    '<td><a href="../.gitbook/assets/cover.png">cover.png</a></td></tr>'
    "<tr><td></td><td><strong>Team</strong></td><td>Unlimited boards</td><td></td><td></td></tr>"
    "</tbody></table>"
)
SHORTCUTS = (
    '<table><thead><tr><th width="270.5">Action</th><th>Mac</th><th>Windows</th></tr></thead>'
    "<tbody><tr><td>Open the <strong>search</strong> panel</td><td><kbd>⌘</kbd>+<kbd>K</kbd></td>"
    "<td><kbd>Ctrl</kbd>+<kbd>K</kbd></td></tr>"
    "<tr><td>Paste as text<br>(no formatting)</td><td>a | b</td>"
    '<td><i class="fa-check">:check:</i></td></tr></tbody></table>'
)

# (construct, source, normalised Markdown, tags counted as removed)
CASES: list[tuple[str, str, str, dict[str, int]]] = [
    (
        "card view: one item per card, icon and cover dropped, target linked",
        f"## Plans\n\n{CARDS}\n\nPick one.",
        "## Plans\n\n- [**Starter**](/help/starter): Two boards, Email help.\n"
        "- **Team**: Unlimited boards.\n\nPick one.\n",
        {},
    ),
    (
        "HTML table with widths: a Markdown table, keys and icons as text",
        f"## Shortcuts\n\n{SHORTCUTS}",
        "## Shortcuts\n\n| Action | Mac | Windows |\n|---|---|---|\n"
        "| Open the **search** panel | ⌘+K | Ctrl+K |\n"
        "| Paste as text (no formatting) | a \\| b | Yes |\n",
        {},
    ),
    (
        "code block with highlighted lines: fenced, entities decoded, braces untouched",
        'Add the provider:\n\n<pre class="language-jsx" data-title="app.jsx">'
        '<code class="lang-jsx"><strong>const user = {{ id: 1 }};\n'
        "</strong>&#x3C;Provider user={user} />\n</code></pre>\n\nDone.",
        "Add the provider:\n\n```jsx\nconst user = {{ id: 1 }};\n<Provider user={user} />\n```\n\n"
        "Done.\n",
        {},
    ),
    (
        "stepper: one numbered list, each step's title on its number",
        "## Connect a domain\n\n{% stepper %}\n{% step %}\n#### Pick a name\n\nUse `docs`.\n"
        "{% endstep %}\n\n{% step %}\n**Add the record**\n\nWait **1 hour**.\n{% endstep %}\n"
        "{% step %}\nClick **Finish**.\n{% endstep %}\n{% endstepper %}\n\nDone.",
        "## Connect a domain\n\n1. **Pick a name**\n\n   Use `docs`.\n\n"
        "2. **Add the record**\n\n   Wait **1 hour**.\n\n3. Click **Finish**.\n\nDone.\n",
        {},
    ),
    (
        "a step's code block and hint stay inside the step",
        "{% stepper %}\n{% step %}\n**Check the record**\n\n```bash\ndig docs.example.com\n"
        'echo ok\n```\n\n{% hint style="info" %}\nWait an hour.\n{% endhint %}\n{% endstep %}\n'
        "{% step %}\n```bash\nreload\n```\n{% endstep %}\n{% endstepper %}",
        "1. **Check the record**\n\n   ```bash\n   dig docs.example.com\n   echo ok\n   ```\n\n"
        "   > **Info:** Wait an hour.\n\n2.\n   ```bash\n   reload\n   ```\n",
        {},
    ),
    (
        "hint with a title line, then a code block with a title",
        '{% hint style="warning" %}\n**Heads up**\n\nBack up first.\n{% endhint %}\n\n'
        '{% code title="config.yml" %}\n```yaml\nroot: ./docs\n```\n{% endcode %}',
        "> **Warning:** **Heads up**\n>\n> Back up first.\n\n```yaml\nroot: ./docs\n```\n",
        {},
    ),
    (
        "content-ref and a mention link show the page's name",
        '{% content-ref url="plans/starter.md" %}\n[starter.md](plans/starter.md)\n'
        '{% endcontent-ref %}\n\nSee [setup-guide](setup-guide/ "mention") and '
        '[the FAQ](faq.md "mention").',
        "[Starter](/help/starter)\n\nSee [Setup guide](/help/setup-guide) and "
        "[the FAQ](/help/faq).\n",
        {},
    ),
    (
        "embed and file blocks: an outside URL links, a local asset is its caption or name",
        '{% embed url="https://video.example.com/v/123" %}\n\n'
        '{% file src="../.gitbook/assets/price%20list.pdf" %}\nPrice list\n{% endfile %}\n\n'
        '{% file src="../.gitbook/assets/terms.pdf" %}',
        "[https://video.example.com/v/123](https://video.example.com/v/123)\n\nPrice list\n\n"
        "terms.pdf\n",
        {},
    ),
    (
        "expandable blocks in a row are sibling sections under the heading before them",
        "### Settings\n\n<details>\n\n<summary>Profile</summary>\n\nChange your name.\n\n"
        "</details>\n\n<details>\n\n<summary>Alerts</summary>\n\nPick alerts.\n\n</details>\n\n"
        "### Billing\n\n<details>\n\n<summary>Invoices</summary>\n\nDownload them.\n\n</details>",
        "### Settings\n\n#### Profile\n\nChange your name.\n\n#### Alerts\n\nPick alerts.\n\n"
        "### Billing\n\n#### Invoices\n\nDownload them.\n",
        {},
    ),
    (
        "an expandable block titled in bold is a heading without the marks",
        "## Apps\n\n<details>\n<summary>**Android**</summary>\n\nOpen the menu.\n</details>",
        "## Apps\n\n### Android\n\nOpen the menu.\n",
        {},
    ),
    (
        "changelog entries keep their date under their heading",
        '{% updates format="full" %}\n{% update date="2026-03-02" tags="new" %}\n'
        "## Dark mode\n\nTurn it on in **Settings**.\n{% endupdate %}\n"
        '{% update date="2026-02-01" %}\nFaster search.\n{% endupdate %}\n{% endupdates %}',
        "## Dark mode\n\n2026-03-02\n\nTurn it on in **Settings**.\n\n2026-02-01\n\n"
        "Faster search.\n",
        {},
    ),
    (
        "a heading written all in bold loses the marks; its anchor goes",
        '### **Cancel button missing** <a href="#missing" id="missing"></a>\n\nWrite to us.',
        "### Cancel button missing\n\nWrite to us.\n",
        {},
    ),
    (
        "the export's stray NaN entity after a hard line break is dropped",
        "1. **Sign up**\\\n   \\&#xNAN;_(Use your work email.)_",
        "1. **Sign up**\\\n   _(Use your work email.)_\n",
        {},
    ),
]


def _links() -> SiteLinks:
    links = SiteLinks()
    for rel, slug in (
        ("plans/starter.md", "starter"),
        ("setup-guide/README.md", "setup-guide"),
        ("faq.md", "faq"),
    ):
        links.add(rel, slug)
    return links


@pytest.mark.parametrize(
    ("source", "expected", "removed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_construct(source: str, expected: str, removed: dict[str, int]) -> None:
    counted: Counter[str] = Counter()
    out = normalise(source, links=_links().resolve, removed=counted)
    assert out == expected
    assert dict(counted) == removed
    assert find_leaks(out) == []


def test_a_table_shown_as_code_stays_code() -> None:
    source = f"Write a card view like this:\n\n```html\n{CARDS}\n```"
    assert normalise(source) == source + "\n"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def gitbook_folder(tmp_path: Path) -> Path:
    """A made-up GitBook space as Git Sync writes it: SUMMARY.md, README groups, assets."""
    _write(tmp_path, "SUMMARY.md", "# Table of contents\n\n* [Plans](plans/README.md)\n")
    _write(
        tmp_path,
        "plans/README.md",
        "---\ndescription: What each plan includes\n---\n\n# Plans\n\n"
        f"{CARDS}\n\n## Shortcuts\n\n{SHORTCUTS}\n\n"
        '{% hint style="info" %}\nPrices are per month.\n{% endhint %}\n',
    )
    _write(
        tmp_path,
        "plans/starter.md",
        "---\ntags:\n  - tag: beta\n    primary: true\n---\n\n"
        "# Starter\n\n### **Upgrade**\n\n{% stepper %}\n{% step %}\n#### Open billing\n\n"
        "Click **Billing**.\n{% endstep %}\n{% step %}\n#### Pick a plan\n\n"
        "Choose **Team**.\n{% endstep %}\n{% endstepper %}\n\n"
        '{% tabs %}\n{% tab title="Web" %}\nUse the browser.\n{% endtab %}\n{% endtabs %}\n\n'
        '<pre class="language-js"><code class="lang-js"><strong>init({{ team: 1 }})\n'
        "</strong></code></pre>\n\n"
        '{% content-ref url="README.md" %}\n[README.md](README.md)\n{% endcontent-ref %}\n',
    )
    (tmp_path / ".gitbook" / "assets").mkdir(parents=True)
    (tmp_path / ".gitbook" / "assets" / "cover.png").write_bytes(b"\x89PNG")
    return tmp_path


@pytest.mark.integration
def test_a_gitbook_space_is_served_as_clean_pages(gitbook_folder: Path) -> None:
    with running_app(articles_dir=gitbook_folder, seed_on_start=True) as api:
        plans = api.client.get("/help/plans").text
        starter = api.client.get("/help/starter").text  # its front matter's tag objects load
        assert api.client.get("/help/summary").status_code == 404  # the contents: no page
        for page in (plans, starter):
            assert not RAW.search(page), RAW.findall(page)
        assert "<table" in plans and "<th>Mac</th>" in plans  # the HTML table, as a table
        assert 'href="/help/starter"' in plans  # the card's target
        assert "Two boards" in plans and "cover.png" not in plans
        assert "<pre" in starter and "init({{ team: 1 }})" in starter  # code stays code
        assert ">Upgrade<" in starter and "**" not in starter
        assert "<ol" in starter and "<strong>Open billing</strong>" in starter  # the stepper
        assert 'href="/help/plans"' in starter and ">Plans<" in starter  # the content-ref

        headers = api.session()
        conv = api.conversation(headers)
        api.send(headers, conv, "How do I upgrade to the Team plan?")
        reply = api.messages(conv)[-1]
        assert reply["role"] == "assistant"
        assert not RAW.search(reply["content"])
