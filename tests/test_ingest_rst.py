"""reStructuredText pages (Sphinx / Read the Docs) become the same section tree as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.ingest.loaders import load_corpus
from app.ingest.sections import build_sections
from app.store.models import Article, Block, Section

# what a reader must never see: roles, directives, substitutions, targets, link syntax
LEAK = re.compile(r":[\w.+-]+:`|^\s*\.\. |\|[A-Za-z_][\w-]*\||`_|::\s*$|<[\w/.-]+>`", re.M)

PLANS = """\
:orphan:

.. _plans-page:

=============
Plans & usage
=============

.. meta::
   :description: What each plan includes and how to change it.

.. contents:: On this page
   :local:

Every project starts on the |free| plan. See :doc:`billing/invoices` for receipts.

.. toctree::
   :hidden:

   billing/invoices

Changing your plan
==================

#. Open :menuselection:`Settings --> Billing`.
#. Click :guilabel:`&Change plan`.

   * Pick a plan from the list.
   * Confirm with :kbd:`Enter`.

#. Check the :ref:`limits <plan-limits>` of the new plan.

.. note::
   A downgrade takes effect at the end of the billing period.

.. only:: html

   Downgrades never delete your builds.

.. _plan-limits:

Limits
------

.. list-table:: Build limits
   :header-rows: 1

   * - Plan
     - Build time
     - Memory
   * - |free|
     - 15 minutes
     - 7GB
   * - Pro
     - 30 minutes
     - 14GB

+------------+--------------+
| Plan       | Redirects    |
+============+==============+
| Community  | 100          |
+------------+--------------+
| Pro        | unlimited    |
+------------+--------------+

=======  ========
Plan     Seats
=======  ========
Free     1
Team     10
=======  ========

.. csv-table:: Storage
   :header: "Plan", "Disk"

   "Free", "5GB"
   "Team", "50GB"

Installing the client
~~~~~~~~~~~~~~~~~~~~~

Run this::

    pip install example-client

.. code-block:: console
   :caption: Check the version
   :linenos:

   $ example --version

.. tabs::

   .. tab:: Linux

      Use your package manager.

   .. group-tab:: macOS

      Use Homebrew.

   .. code-tab:: py Python SDK

      import example

.. tab-set::

   .. tab-item:: Windows

      Download the installer.

.. seealso::

   :ref:`plans-page`
      The page you are reading.

.. versionadded:: 2.1
   Team plans.

.. admonition:: Good to know

   Plans renew every month.

.. warning:: Never share your API token.

.. dropdown:: Is there a trial?

   Yes, 30 days.

.. |free| replace:: Free

.. This comment is for maintainers only.

.. _hidden-target:

Glossary
========

Build minute
   One minute of build time on our servers.

:Owner: the person who pays.
:Editor: a person who edits.

.. figure:: /img/plans.png
   :alt: A chart of plans

   The plans side by side.

.. image:: /img/logo.png
   :alt: Company logo

.. envvar:: EXAMPLE_TOKEN

   The token the client reads.

.. unknownthing:: something
   :someoption: x

   Text inside an unknown directive.

Uses :abbr:`SSO (single sign-on)`, :term:`Build minute`, :file:`conf.py`, :command:`make`,
:code:`x = 1`, :py:func:`~example.client.connect`, :bdg-success:`new` and an |undefined| thing.
"""

INVOICES = """\
Invoices
########

Download invoices from the :ref:`plans page <plans-page>` or :doc:`/plans`.
See :ref:`plans:Limits` and :ref:`Changing plans <plans:changing your plan>`.

.. include:: /shared/footer.rst

.. include:: ../../../outside.rst
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "billing").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "plans.rst").write_text(PLANS, encoding="utf-8")
    (tmp_path / "billing" / "invoices.rst").write_text(INVOICES, encoding="utf-8")
    (tmp_path / "shared" / "footer.rst").write_text("Questions? Write to us.\n", "utf-8")
    return tmp_path


def _articles(folder: Path) -> dict[str, Article]:
    corpus = load_corpus(folder, 1_000_000, default_audience="all")
    assert corpus.errors == []
    return {a.slug: a for a in corpus.articles}


def _blocks(article: Article) -> list[tuple[list[str], Block]]:
    sections: list[Section] = build_sections(article.title, article.body)
    return [(s.path, b) for s in sections for b in s.blocks]


def _find(article: Article, kind: str, needle: str) -> tuple[list[str], Block]:
    for path, block in _blocks(article):
        said = " ".join([block.text, block.label or "", *(block.items or [])])
        if block.kind == kind and needle in said:
            return path, block
    raise AssertionError(f"no {kind} block with {needle!r}: {_blocks(article)}")


def test_title_summary_and_sections_come_from_the_headings(folder: Path) -> None:
    plans = _articles(folder)["plans"]
    assert plans.title == "Plans & usage"
    assert plans.summary == "What each plan includes and how to change it."
    paths = [s.path for s in build_sections(plans.title, plans.body)]
    # any adornment, levels in order of first appearance; the title's overline style is its own
    assert ["Changing your plan"] in paths and ["Glossary"] in paths
    assert ["Changing your plan", "Limits"] in paths
    assert ["Changing your plan", "Installing the client"] in paths  # third level stays a section
    assert _articles(folder)["invoices"].title == "Invoices"


def test_lists_keep_their_nested_items_and_numbering(folder: Path) -> None:
    plans = _articles(folder)["plans"]
    path, steps = _find(plans, "list", "Open")
    assert path == ["Changing your plan"] and steps.ordered
    assert steps.items is not None and len(steps.items) == 3
    assert steps.items[0] == "Open **Settings → Billing**."
    assert "**Change plan**" in steps.items[1] and "Pick a plan from the list." in steps.items[1]
    assert "`Enter`" in steps.items[1]
    assert "limits" in steps.items[2]


def test_every_table_kind_has_its_header_and_rows(folder: Path) -> None:
    plans = _articles(folder)["plans"]
    path, listed = _find(plans, "table", "Build time")
    assert path == ["Changing your plan", "Limits"]
    assert listed.header == ["Plan", "Build time", "Memory"]
    assert listed.rows == [["Free", "15 minutes", "7GB"], ["Pro", "30 minutes", "14GB"]]
    _, grid = _find(plans, "table", "Redirects")
    assert grid.header == ["Plan", "Redirects"] and grid.rows == [
        ["Community", "100"],
        ["Pro", "unlimited"],
    ]
    _, simple = _find(plans, "table", "Seats")
    assert simple.rows == [["Free", "1"], ["Team", "10"]]
    _, csv = _find(plans, "table", "Disk")
    assert csv.header == ["Plan", "Disk"] and csv.rows == [["Free", "5GB"], ["Team", "50GB"]]


def test_literal_blocks_and_code_directives_are_code(folder: Path) -> None:
    plans = _articles(folder)["plans"]
    path, literal = _find(plans, "code", "pip install example-client")
    assert path == ["Changing your plan", "Installing the client"] and literal.label is None
    _, console = _find(plans, "code", "example --version")
    assert console.label == "console" and ":linenos:" not in console.text


def test_admonitions_are_callouts_with_their_labels(folder: Path) -> None:
    plans = _articles(folder)["plans"]
    path, note = _find(plans, "callout", "downgrade takes effect")
    assert path == ["Changing your plan"] and note.label == "Note"
    assert _find(plans, "callout", "Never share")[1].label == "Warning"
    assert _find(plans, "callout", "renew every month")[1].label == "Good to know"
    assert _find(plans, "callout", "Team plans")[1].label == "New in version 2.1"
    assert _find(plans, "callout", "30 days")[1].label == "Is there a trial?"
    seealso = _find(plans, "callout", "The page you are reading")[1]
    assert seealso.label == "See also" and "Plans & usage" in seealso.text


def test_tabs_are_panels_named_by_their_label(folder: Path) -> None:
    plans = _articles(folder)["plans"]
    tabs = {b.label: b for _, b in _blocks(plans) if b.kind == "tab"}
    assert {"Linux", "macOS", "Python SDK", "Windows"} <= set(tabs)
    assert "package manager" in tabs["Linux"].text and "Homebrew" in tabs["macOS"].text
    assert "import example" in tabs["Python SDK"].text
    assert "Use your package manager.\n\n#### macOS" in plans.body  # no rule between tabs
    assert "Never share" not in tabs["Windows"].text  # what follows a tab set is not in it
    path = next(p for p, b in _blocks(plans) if b.label == "Linux")
    assert path == ["Changing your plan", "Installing the client"]


def test_definitions_fields_figures_and_signatures_read_as_text(folder: Path) -> None:
    plans = _articles(folder)["plans"]
    body = plans.body
    assert "**Build minute:** One minute of build time" in body
    assert "**Owner:** the person who pays." in body
    assert "The plans side by side." in body and "Company logo" in body
    assert "**EXAMPLE_TOKEN**" in body and "The token the client reads." in body
    assert "Text inside an unknown directive." in body and "someoption" not in body


def test_roles_read_as_their_words(folder: Path) -> None:
    body = _articles(folder)["plans"].body
    for said in ("SSO (single sign-on)", "Build minute", "`conf.py`", "`make`", "`x = 1`"):
        assert said in body
    assert "connect" in body and "example.client" not in body
    assert "new and an undefined thing" in body
    assert "Every project starts on the Free plan." in body  # the substitution


def test_no_markup_reaches_the_reader(folder: Path) -> None:
    for article in _articles(folder).values():
        prose = re.sub(r"```.*?```", "", article.body, flags=re.DOTALL)
        assert not LEAK.search(prose), (article.slug, LEAK.findall(prose))
        for hidden in ("orphan", "maintainers only", "hidden-target", "On this page", "toctree"):
            assert hidden not in article.body
    assert "Downgrades never delete your builds." in _articles(folder)["plans"].body


def test_doc_and_ref_links_point_to_the_served_page_and_section(folder: Path) -> None:
    articles = _articles(folder)
    invoices = articles["invoices"].body
    assert "[plans page](/help/plans)" in invoices
    assert "[Plans & usage](/help/plans)" in invoices
    assert "[Limits](/help/plans#limits)" in invoices
    assert "[Changing plans](/help/plans#changing-your-plan)" in invoices
    plans = articles["plans"].body
    assert "[Invoices](/help/invoices)" in plans
    assert "[limits](#limits)" in plans  # a section of the same page


def test_includes_come_from_the_project_only(folder: Path, tmp_path: Path) -> None:
    (tmp_path.parent / "outside.rst").write_text("SECRET outside text\n", encoding="utf-8")
    invoices = _articles(folder)["invoices"].body
    assert "Questions? Write to us." in invoices
    assert "SECRET" not in invoices


def test_conf_py_substitutions_apply_without_running_it(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text(
        'import os\nrst_epilog = """\n.. |brand| replace:: Example Cloud\n"""\n'
        'rst_prolog = os.environ["NEVER_READ"]\n',
        encoding="utf-8",
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "start.rst").write_text(
        "Start\n=====\n\n.. tabs::\n\n   .. tab:: |brand|\n\n      Sign in to |brand|.\n",
        encoding="utf-8",
    )
    article = _articles(tmp_path)["start"]
    assert "Sign in to Example Cloud." in article.body
    assert "#### Example Cloud" in article.body


@pytest.mark.integration
def test_a_folder_of_rst_pages_is_served_and_answered_from(folder: Path) -> None:
    from tests.apihelp import running_app

    with running_app(articles_dir=folder, seed_on_start=True) as api:
        page = api.client.get("/help/plans")
        assert page.status_code == 200
        text = re.sub(r"<pre>.*?</pre>", "", page.text, flags=re.DOTALL)
        assert not LEAK.search(text), LEAK.findall(text)
        assert 'id="limits"' in page.text and "Settings → Billing" in page.text
        invoices = api.client.get("/help/invoices").text
        assert 'href="/help/plans#limits"' in invoices
        headers = api.session()
        conv = api.conversation(headers)
        api.send(headers, conv, "How much memory does the Pro plan have?")
        reply = api.messages(conv)[-1]
        assert reply["role"] == "assistant" and "14GB" in reply["content"]
        assert not LEAK.search(reply["content"])


def test_a_visible_toctree_lists_its_pages_and_escapes_read_plainly(tmp_path: Path) -> None:
    (tmp_path / "guides").mkdir()
    (tmp_path / "guides" / "index.rst").write_text(
        "Guides\n======\n\n.. toctree::\n   :maxdepth: 1\n\n   setup\n   Upgrading <upgrade>\n"
        "   *\n\n.. toctree::\n   :hidden:\n\n   secret\n",
        encoding="utf-8",
    )
    (tmp_path / "guides" / "setup.rst").write_text(
        "Set up\n======\n\nType \\*.example.com and a\\ b, see `Set up`_ and :ref:`Set up`.\n",
        encoding="utf-8",
    )
    (tmp_path / "guides" / "upgrade.rst").write_text("Upgrade\n=======\n\nRun it.\n", "utf-8")
    (tmp_path / "guides" / "secret.rst").write_text("Secret\n======\n\nHidden.\n", "utf-8")
    articles = _articles(tmp_path)
    index = articles["guides"].body
    assert "- [Set up](/help/setup)\n- [Upgrading](/help/upgrade)" in index
    assert "secret" not in index.lower() and "*" not in index
    setup = articles["setup"].body
    assert "Type *.example.com and ab, see Set up and Set up." in setup  # the page itself
    assert "\x00" not in setup


def test_builder_only_text_unknown_directives_and_several_top_sections(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text('project = "X"\nversion = "4.2"\n', encoding="utf-8")
    (tmp_path / "page.rst").write_text(
        "Getting started\n===============\n\n.. meta::\n   :keywords: setup, install\n\n"
        "Intro text for |version|.\n\n.. only:: latex\n\n   Printed manuals only.\n\n"
        ".. only:: html or epub\n\n   Shown on the web.\n\n.. youtube:: dQw4w9WgXcQ\n\n"
        "Next steps\n==========\n\nMore text.\n",
        encoding="utf-8",
    )
    page = _articles(tmp_path)["page"]
    assert page.title == "Getting started" and page.tags == ["setup", "install"]
    assert "## Getting started" not in page.body and "## Next steps" in page.body
    assert "Intro text for 4.2." in page.body and "Shown on the web." in page.body
    assert "Printed manuals" not in page.body and "dQw4w9WgXcQ" not in page.body


def test_a_page_docutils_cannot_read_is_reported_and_the_rest_loads(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.ingest.rst as rst

    real = rst.publish_doctree

    def fragile(source: str, **kwargs: object) -> object:
        if "Invoices" in source:
            raise RecursionError("maximum recursion depth exceeded")
        return real(source, **kwargs)

    monkeypatch.setattr(rst, "publish_doctree", fragile)
    corpus = load_corpus(folder, 1_000_000, default_audience="all")
    assert sorted(a.slug for a in corpus.articles) == ["footer", "plans"]
    assert (
        len(corpus.errors) == 1
        and "could not read it as reStructuredText" in corpus.errors[0].reason
    )


def test_a_docs_set_served_from_its_repository_uses_the_conf_py_above(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text(
        'exclude_patterns = ["_build", "shared"]\nrst_epilog = ".. |brand| replace:: Acme"\n',
        encoding="utf-8",
    )
    docs = tmp_path / "user"
    (docs / "shared").mkdir(parents=True)
    (docs / "guides").mkdir()
    (docs / "shared" / "note.rst").write_text(".. note:: Only on |brand| Pro.\n", "utf-8")
    (docs / "plans.rst").write_text("|brand| plans\n=============\n\nAll plans.\n", "utf-8")
    (docs / "guides" / "upgrade.rst").write_text(
        "Upgrade\n=======\n\n.. include:: /shared/note.rst\n\nSee :doc:`/plans`.\n", "utf-8"
    )
    corpus = load_corpus(docs, 1_000_000, default_audience="all")
    assert sorted(a.slug for a in corpus.articles) == ["plans", "upgrade"]
    assert len(corpus.skipped) == 1 and corpus.skipped[0].path.endswith("shared/note.rst")
    assert "exclude_patterns" in corpus.skipped[0].reason
    upgrade = next(a for a in corpus.articles if a.slug == "upgrade").body
    assert "> **Note:** Only on Acme Pro." in upgrade and "[Acme plans](/help/plans)" in upgrade


def test_a_link_to_the_folders_own_index_page_resolves(tmp_path: Path) -> None:
    (tmp_path / "index.rst").write_text("Welcome\n=======\n\nStart here.\n", "utf-8")
    (tmp_path / "guides").mkdir()
    (tmp_path / "guides" / "a.rst").write_text(
        "A\n=\n\nBack to :doc:`the start <../index>` or `home <../index.rst>`_.\n", "utf-8"
    )
    body = _articles(tmp_path)["a"].body
    assert "[the start](/help/index)" in body and "[home](/help/index)" in body
