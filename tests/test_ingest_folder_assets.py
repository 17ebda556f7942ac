"""A docs folder served as written: what its generator does not publish as a page is not served
(`.mintignore`, Mintlify's defaults, static files and snippets), and a PDF that is a copy of the
folder's pages is not a page either. Every file is made up for the test."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from app.ingest import ingest_corpus
from app.ingest.copies import print_copies, repeated_share, runs
from app.ingest.loaders import CorpusLoad, load_corpus
from app.providers.embeddings.fake import FakeEmbedder
from app.store import Store
from tests.pdfgen import manual_pdf

MAX = 10_000_000
MINTLIFY_CONFIG = {"$schema": "https://mintlify.com/docs.json", "name": "Quillmate", "theme": "x"}

PAGES = {
    "sync.md": "# Syncing notebooks\n\nQuillmate syncs every notebook to your other devices "
    "within thirty seconds of the last edit. Sync pauses while the laptop is on battery saver "
    "and resumes as soon as it is plugged in again. Conflicting edits are kept side by side in "
    "a note called Conflicts so nothing you typed is lost.\n",
    "export.md": "# Exporting notes\n\nOpen the notebook menu and choose Export to save every "
    "note as a Markdown file inside one zip archive. Attachments travel in a folder named after "
    "the notebook, and links between notes keep working once the archive is unpacked.\n",
    "sharing.md": "# Sharing a notebook\n\nInvite a colleague from the share sheet by typing "
    "their email address. Guests can read and comment but only editors may move or delete "
    "notes, and the owner can revoke an invitation at any time from the same sheet.\n",
}
MANUAL_TEXT = (
    "The Quillmate pen pairs over Bluetooth when you hold the clip button for five seconds "
    "until the ring glows amber. Charge the pen with the magnetic cable for ninety minutes "
    "before first use; a full charge lasts eleven days of normal writing. Replace the nib "
    "when the tip feels scratchy by pulling it straight out with the supplied tweezers."
)


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def _text_pdf(text: str, title: str = "Quillmate handbook") -> bytes:
    """A PDF whose pages carry `text` as plain lines (a print of the pages, or a manual)."""
    buf = io.BytesIO()
    canvas = Canvas(buf, pagesize=A4)
    canvas.setTitle(title)
    y = A4[1] - 72
    for paragraph in text.split("\n"):
        for line in textwrap.wrap(paragraph, 80) or [""]:
            if y < 72:
                canvas.showPage()
                y = A4[1] - 72
            canvas.setFont("Helvetica", 10)
            canvas.drawString(72, y, line)
            y -= 14
    canvas.showPage()
    canvas.save()
    return buf.getvalue()


def _page(name: str) -> str:
    """A page of its own (two files with one title and text are one page served once)."""
    return f"# A page: {name}\n\nSome text about {name}.\n"


def _load(root: Path) -> CorpusLoad:
    return load_corpus(root, MAX, default_audience="all")


def _rel(path: str | None, root: Path) -> str:
    return Path(path or "").resolve().relative_to(root.resolve()).as_posix()


def _served(corpus: CorpusLoad, root: Path) -> set[str]:
    return {_rel(a.source_path, root) for a in corpus.articles}


def _skipped(corpus: CorpusLoad, root: Path) -> dict[str, str]:
    return {_rel(e.path, root): e.reason for e in corpus.skipped}


# ---- .mintignore -------------------------------------------------------------------------

MINTIGNORE = """\
# drafts stay in the repository
drafts/

*.draft.mdx
/only-at-root.md
**/internal/**
secret/*
!secret/public.mdx
"""


def test_mintignore_patterns_leave_files_out_with_gitignore_semantics(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "docs.json": json.dumps(MINTLIFY_CONFIG),
            ".mintignore": MINTIGNORE,
            "keep.mdx": _page("keep.mdx"),
            "drafts/plan.mdx": _page("drafts/plan.mdx"),  # `dir/`
            "guide/drafts/nested.mdx": _page(
                "guide/drafts/nested.mdx"
            ),  # `dir/` matches at any depth
            "guide/setup.draft.mdx": _page("guide/setup.draft.mdx"),  # `*.ext`
            "only-at-root.md": _page("only-at-root.md"),  # leading `/`: anchored to the root
            "guide/only-at-root.md": _page("guide/only-at-root.md"),
            "team/internal/notes.md": _page("team/internal/notes.md"),  # `**/`
            "internal/roadmap.md": _page("internal/roadmap.md"),
            "secret/hidden.mdx": _page("secret/hidden.mdx"),
            "secret/public.mdx": _page("secret/public.mdx"),  # `!negation`
        },
    )
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {"keep.mdx", "guide/only-at-root.md", "secret/public.mdx"}
    skipped = _skipped(corpus, tmp_path)
    for name in (
        "drafts/plan.mdx",
        "guide/drafts/nested.mdx",
        "guide/setup.draft.mdx",
        "only-at-root.md",
        "team/internal/notes.md",
        "internal/roadmap.md",
        "secret/hidden.mdx",
    ):
        assert skipped[name] == "left out by .mintignore", name
    assert not corpus.errors


def test_a_mintignore_applies_to_the_folder_holding_it(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "docs/.mintignore": "drafts/\n",
            "docs/guide.md": _page("docs/guide.md"),
            "docs/drafts/plan.md": _page("docs/drafts/plan.md"),
            "drafts/elsewhere.md": _page(
                "drafts/elsewhere.md"
            ),  # beside the docs, not under the file's folder
        },
    )
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {"docs/guide.md", "drafts/elsewhere.md"}
    assert _skipped(corpus, tmp_path)["docs/drafts/plan.md"] == "left out by docs/.mintignore"


def test_mintlify_defaults_apply_only_to_a_mintlify_project(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "guide.md": _page("guide.md"),
        "CONTRIBUTING.md": "# Contributing\n\nOpen a pull request.\n",
        "build/output.md": _page("build/output.md"),
        "tmp/scratch.md": _page("tmp/scratch.md"),
    }
    plain = _write(tmp_path / "plain", files)
    assert {Path(a.source_path or "").name for a in _load(plain).articles} == {
        "guide.md",
        "CONTRIBUTING.md",
        "output.md",
        "scratch.md",
    }
    mint = _write(tmp_path / "mint", {**files, "mint.json": "{}"})
    corpus = _load(mint)
    assert _served(corpus, mint) == {"guide.md"}
    skipped = _skipped(corpus, mint)
    for name in ("CONTRIBUTING.md", "build/output.md", "tmp/scratch.md"):
        assert skipped[name] == "left out by Mintlify's default ignore list", name


def test_a_docs_json_that_is_not_mintlifys_changes_nothing(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "docs.json": json.dumps({"pages": ["guide"]}),
            "guide.md": "# Guide\n\nText.\n",
            "build/steps.md": "# Build steps\n\nHow to build the product.\n",
        },
    )
    assert _served(_load(tmp_path), tmp_path) == {"guide.md", "build/steps.md"}


def test_a_mintlify_project_serves_its_snippets_folder_only_where_it_is_imported(
    tmp_path: Path,
) -> None:
    _write(
        tmp_path,
        {
            "docs.json": json.dumps(MINTLIFY_CONFIG),
            "snippets/limits.mdx": "Each notebook holds up to 4,000 notes.\n",
            "snippets/unused.mdx": "A fragment no page imports yet.\n",
            "notebooks.mdx": 'import Limits from "/snippets/limits.mdx";\n\n# Notebooks\n\n'
            "<Limits />\n",
        },
    )
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {"notebooks.mdx"}
    assert "4,000 notes" in corpus.articles[0].body
    assert "snippets/ folder" in _skipped(corpus, tmp_path)["snippets/unused.mdx"]


def test_a_page_a_mintlify_project_hides_is_not_served(tmp_path: Path) -> None:
    """Mintlify keeps a `hidden: true` page out of its search and its AI context, so a
    support answer does not quote it; the same front matter elsewhere (GitBook hides a page only
    from the table of contents) changes nothing."""
    hidden = "---\ntitle: Migration checklist\nhidden: true\n---\n\nSteps for a migration.\n"
    _write(
        tmp_path,
        {
            "mintlify/docs.json": json.dumps(MINTLIFY_CONFIG),
            "mintlify/guides/checklist.mdx": hidden,
            "mintlify/guides/start.mdx": "---\ntitle: Start\nhidden: false\n---\n\nBegin here.\n",
            "gitbook/checklist.md": hidden,
        },
    )
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {"mintlify/guides/start.mdx", "gitbook/checklist.md"}
    assert "hidden: true" in _skipped(corpus, tmp_path)["mintlify/guides/checklist.mdx"]


def test_a_pdf_in_a_mintlify_project_is_a_static_file_not_a_page(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "docs.json": json.dumps(MINTLIFY_CONFIG),
            "pen.mdx": "# The pen\n\nSee the [handbook](/files/handbook.pdf).\n",
            "files/handbook.pdf": _text_pdf(MANUAL_TEXT),
        },
    )
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {"pen.mdx"}
    assert "static file of a Mintlify project" in _skipped(corpus, tmp_path)["files/handbook.pdf"]


# ---- a PDF that copies the pages ---------------------------------------------------------


def test_a_pdf_printed_from_the_pages_is_not_served_beside_them(tmp_path: Path) -> None:
    printed = "\n".join(body.replace("# ", "") for body in PAGES.values())
    _write(tmp_path, {**PAGES, "print/quillmate-all.pdf": _text_pdf(printed)})
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == set(PAGES)
    reason = _skipped(corpus, tmp_path)["print/quillmate-all.pdf"]
    assert reason.startswith("a copy of the folder's pages")
    assert not corpus.errors


def test_a_manual_pdf_beside_unrelated_pages_is_kept(tmp_path: Path) -> None:
    _write(tmp_path, {**PAGES, "manuals/pen.pdf": _text_pdf(MANUAL_TEXT)})
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {*PAGES, "manuals/pen.pdf"}
    assert not corpus.skipped


def test_a_pdf_only_folder_is_served(tmp_path: Path) -> None:
    _write(tmp_path, {"lamp.pdf": manual_pdf(scanned=False), "pen.pdf": _text_pdf(MANUAL_TEXT)})
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {"lamp.pdf", "pen.pdf"}


def test_the_copy_share_is_the_part_of_the_document_found_in_the_pages() -> None:
    pages = list(PAGES.values())
    whole = " ".join(pages)
    half = PAGES["sync.md"] + " " + MANUAL_TEXT
    found = print_copies({"whole": whole, "half": half, "manual": MANUAL_TEXT}, pages)
    assert set(found) == {"whole"}
    assert found["whole"] > 0.9  # only the runs across the seams between pages are new
    known = set().union(*map(runs, pages))
    assert 0.3 < repeated_share(half, known) < 0.5
    assert repeated_share(MANUAL_TEXT, known) == 0.0
    assert runs("It's   a <!-- page 3 --> Test, of RUNS here") == {
        "it s a test of",
        "s a test of runs",
        "a test of runs here",
    }


async def test_ingest_stores_only_the_pages(tmp_path: Path, store: Store) -> None:
    _write(
        tmp_path,
        {
            **PAGES,
            "all.pdf": _text_pdf("\n".join(PAGES.values())),
            "site/.mintignore": "draft.md\n",
            "site/draft.md": "# Draft\n\nNot ready.\n",
            "site/guide.md": "# Guide\n\nReady.\n",
        },
    )
    report = await ingest_corpus(store, FakeEmbedder(), tmp_path, default_audience="all")
    assert {a.id for a in await store.articles.list()} == {"sync", "export", "sharing", "guide"}
    assert {Path(e.path).name for e in report.skipped} == {"all.pdf", "draft.md"}


# ---- MkDocs: exclude_docs and draft_docs ------------------------------------------------

MKDOCS_YML = """\
site_name: Quillmate
docs_dir: pages
exclude_docs: |
  # notes for the writers
  /internal/
  *.wip.md
draft_docs: |
  drafts/
markdown_extensions:
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
extra:
  analytics: !ENV ANALYTICS_KEY
"""


@pytest.mark.parametrize("served", ["pages", "."], ids=["docs-dir", "project-root"])
def test_mkdocs_exclude_and_draft_docs_leave_files_out(tmp_path: Path, served: str) -> None:
    _write(
        tmp_path,
        {
            "mkdocs.yml": MKDOCS_YML,
            "pages/index.md": "# Welcome\n\nStart here.\n",
            "pages/sync.md": _page("pages/sync.md"),
            "pages/internal/runbook.md": _page("pages/internal/runbook.md"),
            "pages/guide/internal/kept.md": _page(
                "pages/guide/internal/kept.md"
            ),  # `/internal/` is anchored to docs_dir
            "pages/guide/export.wip.md": _page("pages/guide/export.wip.md"),
            "pages/drafts/next.md": _page("pages/drafts/next.md"),
        },
    )
    root = tmp_path / served
    corpus = _load(root)
    inside = "" if served == "pages" else "pages/"
    assert _served(corpus, root) == {
        f"{inside}{p}" for p in ("index.md", "sync.md", "guide/internal/kept.md")
    }
    skipped = _skipped(corpus, root)
    assert skipped[f"{inside}internal/runbook.md"] == "left out by mkdocs.yml exclude_docs"
    assert skipped[f"{inside}guide/export.wip.md"] == "left out by mkdocs.yml exclude_docs"
    assert skipped[f"{inside}drafts/next.md"] == "left out by mkdocs.yml draft_docs"


# ---- the same page twice ----------------------------------------------------------------


def test_a_page_copied_into_a_second_folder_is_served_once_and_links_follow_it(
    tmp_path: Path,
) -> None:
    """Two files with the same title and text (one page copied under install/ and upgrade/)
    would be two passages saying one thing: the copy nearest the root is served, the other is
    skipped, and a link to it leads to the served one. A page with the same text under another
    title is another page."""
    page = "# Running on Kubernetes\n\nApply the chart, then wait for the pods to be ready.\n"
    _write(
        tmp_path,
        {
            "install/kubernetes.md": page,
            "guides/upgrade/kubernetes.md": page,
            "guides/helm.md": "# Helm\n\nText.\n",
            "faq.md": "# FAQ\n\nSee [the upgrade](guides/upgrade/kubernetes.md) for pods.\n",
        },
    )
    corpus = _load(tmp_path)
    assert _served(corpus, tmp_path) == {"install/kubernetes.md", "guides/helm.md", "faq.md"}
    assert "the same page as" in _skipped(corpus, tmp_path)["guides/upgrade/kubernetes.md"]
    faq = next(a for a in corpus.articles if a.title == "FAQ")
    kept = next(a for a in corpus.articles if a.title == "Running on Kubernetes")
    assert f"(/help/{kept.slug})" in faq.body


def test_the_same_text_under_another_title_is_another_page(tmp_path: Path) -> None:
    body = "Apply the chart, then wait for the pods to be ready.\n"
    _write(
        tmp_path,
        {
            "a.md": "---\ntitle: Installing\n---\n\n" + body,
            "b.md": "---\ntitle: Upgrading\n---\n\n" + body,
        },
    )
    assert _served(_load(tmp_path), tmp_path) == {"a.md", "b.md"}
