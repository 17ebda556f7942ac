"""Site-generator dialects normalised at load: one row per construct, input → exact Markdown.

Every input is written here for the test (no text from real sites). The links resolve against
a two-page folder; `removed` names the tags that could not be rendered (never shown)."""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath

import pytest

from app.ingest.dialects import Note, NoteIndex, normalise
from app.ingest.leaks import find_leaks
from app.ingest.pagelinks import SiteLinks

# (construct, source, normalised Markdown, tags counted as removed)
CASES: list[tuple[str, str, str, dict[str, int]]] = [
    (
        "liquid callout block tag",
        "Before.\n\n{% callout warning %}\nExport your notes first.\n{% endcallout %}\n\nAfter.",
        "Before.\n\n> **Warning:** Export your notes first.\n\nAfter.\n",
        {},
    ),
    (
        "liquid capture expanded by markdownify",
        "{% capture steps %}\n1. Open **Settings**.\n2. Pick a plan.\n{% endcapture %}\n"
        "## Desktop\n\n{{ steps | markdownify }}",
        "## Desktop\n\n1. Open **Settings**.\n2. Pick a plan.\n",
        {},
    ),
    (
        "liquid page and site variables, baseurl link",
        "Written for {{ page.product }} on {{ site.title }}. "
        "See [plans]({{ site.baseurl }}/article/plans/).",
        "Written for Acme on. See [plans](/help/plans).\n",
        {"liquid:{{ site.title }}": 1},
    ),
    (
        "liquid link tag",
        "Read [the plans]({% link _articles/plans.md %}) first.",
        "Read [the plans](/help/plans) first.\n",
        {},
    ),
    (
        "liquid URL-encoded baseurl with anchor",
        "Read [plans](%7B%7Bsite.baseurl%7D%7D/article/plans/#annual).",
        "Read [plans](/help/plans#annual).\n",
        {},
    ),
    (
        "liquid if keeps its first branch",
        "{% if site.cloud %}Cloud text.{% else %}Self-hosted text.{% endif %}",
        "Cloud text.\n",
        {},
    ),
    (
        "liquid include and for loop removed, counted",
        'Intro.\n\n{% include video.html id="x" %}\n'
        "{% for p in site.plans %}- {{ p.name }}\n{% endfor %}\nEnd.",
        "Intro.\n\nEnd.\n",
        {"liquid:include": 1, "liquid:for": 1},
    ),
    (
        "liquid image tag is its alt text, check icon a symbol",
        "Click {% icon fa-paperclip %} **Attach**. {% image attach.png Attach button %}",
        "Click **Attach**. Attach button\n",
        {},
    ),
    (
        "liquid unknown inline tag removed, counted",
        "Version {% version_badge 2 %} is out.",
        "Version is out.\n",
        {"liquid:version_badge": 1},
    ),
    (
        "liquid highlight becomes a fence, its content untouched",
        "{% highlight bash %}\necho {{ x }}\n{% endhighlight %}",
        "```bash\necho {{ x }}\n```\n",
        {},
    ),
    (
        "hugo notice with title",
        '{{% notice warning "Data loss" %}}\nThis deletes everything.\n{{% /notice %}}',
        "> **Data loss:** This deletes everything.\n",
        {},
    ),
    (
        "hugo expand is a section named by its title",
        '{{%expand "How long does it take?" %}}About a day.{{% /expand %}}',
        "## How long does it take?\n\nAbout a day.\n",
        {},
    ),
    (
        "hugo tabs are sections one level below the current heading",
        '## Install\n\n{{< tabs >}}\n{{% tab name="Android" %}}\nOpen the Play Store.\n'
        '{{% /tab %}}\n{{% tab name="iOS" %}}\nOpen the App Store.\n{{% /tab %}}\n'
        "{{< /tabs >}}\n\nDone.",
        "## Install\n\n### Android\n\nOpen the Play Store.\n\n### iOS\n\nOpen the App Store."
        "\n\nDone.\n",
        {},
    ),
    (
        "hugo relref and ref",
        'See [the plans]({{< relref "plans.md#annual" >}}) and [setup]({{< ref "/docs/setup" >}}).',
        "See [the plans](/help/plans#annual) and [setup](/help/setup).\n",
        {},
    ),
    (
        "hugo param from front matter; siteparam removed, counted",
        'Install {{< param "product" >}} {{< siteparam "version" >}} now.',
        "Install Acme now.\n",
        {"hugo:siteparam": 1},
    ),
    (
        "hugo unknown shortcodes: empty ones vanish, paired ones keep their body",
        'Text {{< version-tag "2.1" >}} here.\n\n{{< youtube abc >}}\n\n'
        "{{< custombox >}}Kept body.{{< /custombox >}}",
        "Text here.\n\nKept body.\n",
        {"hugo:version-tag": 1, "hugo:youtube": 1, "hugo:custombox": 1},
    ),
    (
        "hugo figure and an asset inside an image URL are alt text",
        '{{< figure src="a.png" alt="The dashboard" >}}\n\n![Menu]({{< asset "img/menu.png" >}})',
        "The dashboard\n\nMenu\n",
        {},
    ),
    (
        "MDX component with a text prop is that text; empty unknown one vanishes, counted",
        'Press <Key k="ctrl" /> + <Key k="z" /> to undo, <kbd>Esc</kbd> to close. <Spacer />',
        "Press ctrl + z to undo, Esc to close.\n",
        {"jsx:<Spacer />": 1},
    ),
    (
        "MDX Admonition component",
        '<Admonition type="caution" title="Careful">\nThis cannot be undone.\n</Admonition>',
        "> **Careful:** This cannot be undone.\n",
        {},
    ),
    (
        "details/summary is a section named by its summary",
        "<details>\n<summary>Why is sync slow?</summary>\n\nLarge files take longer.\n</details>",
        "## Why is sync slow?\n\nLarge files take longer.\n",
        {},
    ),
    (
        "MkDocs snippet is the file's text",
        'Shared:\n\n--8<-- "snippets/limits.md"\n\nEnd.',
        "Shared:\n\nUp to **5** devices.\n\nEnd.\n",
        {},
    ),
    (
        "GitBook hint",
        '{% hint style="info" %}\nYou can change this later.\n{% endhint %}',
        "> **Info:** You can change this later.\n",
        {},
    ),
    (
        "GitBook tabs",
        '### Sign in\n\n{% tabs %}\n{% tab title="Web" %}\nUse the browser.\n{% endtab %}\n'
        '{% tab title="Desktop" %}\nUse the app.\n{% endtab %}\n{% endtabs %}',
        "### Sign in\n\n#### Web\n\nUse the browser.\n\n#### Desktop\n\nUse the app.\n",
        {},
    ),
    (
        "kramdown block IAL before a paragraph makes a callout",
        "{: .warning }\nBack up before you upgrade.\n\nNext.",
        "> **Warning:** Back up before you upgrade.\n\nNext.\n",
        {},
    ),
    (
        "kramdown block IAL after a paragraph; inline IAL dropped",
        'Keep your key safe.\n{: .note}\n\n[Open](/help/setup){:target="_blank"}',
        "> **Note:** Keep your key safe.\n\n[Open](/help/setup)\n",
        {},
    ),
    (
        "kramdown header-less table: a column of labels becomes the header",
        "| **Deletion Date** | 30 days after cancelling |\n"
        "| **Expiration Date** | 90 days after the last login |",
        "| Deletion Date | Expiration Date |\n|---|---|\n"
        "| 30 days after cancelling | 90 days after the last login |\n",
        {},
    ),
    (
        "kramdown header-less table: the first row becomes the header",
        "| Plan | Price |\n| Free | 0 |\n| Pro | 10 |",
        "| Plan | Price |\n|---|---|\n| Free | 0 |\n| Pro | 10 |\n",
        {},
    ),
    (
        "an HTML list in a cell keeps its items apart",
        "| Name | Values |\n|---|---|\n"
        "| Theme | {::nomarkdown}<ul><li>1 for Light</li><li>2 for Dark</li></ul>{:/} |",
        "| Name | Values |\n|---|---|\n| Theme | 1 for Light; 2 for Dark |\n",
        {},
    ),
    (
        "check and cross cells (emoji, icon font, entity, symbol) read as words",
        "| Feature | Free | Teams |\n|---|:-:|:-:|\n| SSO | :x: | :white_check_mark: |\n"
        '| API | <i class="fa fa-check"></i> | &#10003; |\n'
        "| Audit | {% icon fa-times %} | ✔ |\n"
        '| Export | <i class="fa fa-star"></i> | |',
        "| Feature | Free | Teams |\n|---|---|---|\n| SSO | No | Yes |\n| API | Yes | Yes |\n"
        "| Audit | No | Yes |\n| Export | star | |\n",
        {},
    ),
    (
        "HTML tab widget (ul.nav-tabs + div.tab-pane), indented panes",
        '<ul class="nav nav-tabs">\n'
        '  <li class="active"><a href="#web" data-toggle="tab">Web vault</a></li>\n'
        '  <li><a href="#mobile" data-toggle="tab">Mobile</a></li>\n</ul>\n'
        '<div class="tab-content">\n    <div class="tab-pane active" id="web">\n'
        "        1. Log in.\n        2. Open **Tools**.\n    </div>\n"
        '    <div class="tab-pane" id="mobile">\n        Tap **Settings**.\n    </div>\n</div>',
        "## Web vault\n\n1. Log in.\n2. Open **Tools**.\n\n## Mobile\n\nTap **Settings**.\n",
        {},
    ),
    (
        "emoji and icon shortcodes",
        "Done :white_check_mark: — see :material-cog: settings :warning:.",
        "Done ✓ — see settings ⚠.\n",
        {},
    ),
    (
        "HTML entities decoded (markup-significant ones kept)",
        "Caf&eacute;&nbsp;menu &amp; more &lt;tag&gt; &#x2713;",
        "Café menu &amp; more &lt;tag&gt; ✓\n",
        {},
    ),
    (
        "template syntax in code is never touched",
        "Use `{{ site.title }}` or:\n\n```liquid\n{% if x %}{{ y }}{% endif %}\n```",
        "Use `{{ site.title }}` or:\n\n```liquid\n{% if x %}{{ y }}{% endif %}\n```\n",
        {},
    ),
]


def _folder() -> tuple[NoteIndex, SiteLinks]:
    links = SiteLinks()
    links.add("_articles/plans.md", "plans")
    links.add("docs/setup.md", "setup")
    index = NoteIndex()
    index.add("snippets/limits.md", Note("limits", "Up to **5** devices.", "snippets"))
    return index, links


@pytest.mark.parametrize(
    ("source", "expected", "removed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_construct(source: str, expected: str, removed: dict[str, int]) -> None:
    index, links = _folder()
    counted: Counter[str] = Counter()
    out = normalise(source, index, meta={"product": "Acme"}, links=links.resolve, removed=counted)
    assert out == expected
    assert dict(counted) == removed
    assert find_leaks(out) == []


def test_every_case_had_syntax_the_leak_detector_sees() -> None:
    """The detector is not blind: most raw inputs above leak before normalisation."""
    raw_leaky = [c[0] for c in CASES if find_leaks(c[1])]
    assert len(raw_leaky) >= 20


def test_missing_snippet_and_dead_link_are_warnings_not_text() -> None:
    index, links = _folder()
    warnings: list[str] = []
    out = normalise(
        '--8<-- "nowhere.md"\n\nSee [old page](../gone.md).',
        index,
        links=links.resolve,
        warnings=warnings,
    )
    assert out == "See old page.\n"
    assert any("nowhere.md" in w for w in warnings)
    assert any("gone.md" in w for w in warnings)


def test_tab_groups_restore_the_level_after_them() -> None:
    source = (
        '## A\n\n{% tabs %}\n{% tab title="One" %}\nx\n{% endtab %}\n{% endtabs %}\n\n'
        '## B\n\n{% tabs %}\n{% tab title="Two" %}\ny\n{% endtab %}\n{% endtabs %}'
    )
    assert normalise(source) == "## A\n\n### One\n\nx\n\n## B\n\n### Two\n\ny\n"


def test_braces_that_are_not_liquid_are_kept_as_code_not_removed() -> None:
    """A product's own `{{Field}}` syntax, a cloze, or maths in braces is text, not Liquid."""
    source = "Use {{Front}} and {{c1::Paris}} on the card.\n\n    {{Back}} in a code block\n"
    out = normalise(source)
    code = "    {{Back}} in a code block\n"
    assert out == "Use `{{Front}}` and `{{c1::Paris}}` on the card.\n\n" + code
    assert find_leaks(out) == []


def test_language_from_a_region_suffix_and_the_folder_majority() -> None:
    from app.ingest.pagelang import page_locales

    pages = [
        (PurePosixPath("ads-fr_FR.md"), {}, "Texte court."),
        (PurePosixPath("a.md"), {}, "x"),
        (PurePosixPath("b.md"), {}, "y"),
        (PurePosixPath("c.md"), {"lang": "de"}, "z"),
        (PurePosixPath("d.md"), {}, "w"),
    ]
    votes = iter(["fr", "en", "fr"])  # the detector's guesses for the undeclared pages
    # one guess of "en" does not make a page of a French folder English
    assert page_locales(pages, detect=lambda _: next(votes)) == ["fr-FR", "fr", "fr", "de", "fr"]


def test_a_link_whose_text_runs_over_a_line_break_resolves() -> None:
    _, links = _folder()
    out = normalise("See [the plans\nfor teams](../plans.md#annual) now.", links=links.resolve)
    assert out == "See [the plans\nfor teams](/help/plans#annual) now.\n"
