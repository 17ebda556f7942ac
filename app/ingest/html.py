"""HTML help pages to markdown, so the chunker treats them exactly like markdown articles. Pure.

Metadata comes from `<meta name="..." content="...">` (the same keys as markdown front matter,
plus `description` for the summary and `<html lang>` for the locale). The title is the page's
first `<h1>`, else `<title>`. Site chrome is dropped: nav, header, footer, aside, script, style,
forms, hidden elements, ARIA navigation/banner/complementary regions, and elements whose class
or id names a breadcrumb, sidebar, table of contents, cookie banner or similar.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning
from bs4.element import Comment, NavigableString, Tag

_CHROME_TAGS = (
    "nav",
    "header",
    "footer",
    "aside",
    "script",
    "style",
    "noscript",
    "template",
    "form",
    "button",
    "svg",
    "iframe",
)
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search"}
_CHROME_NAMES = re.compile(
    r"breadcrumb|sidebar|side-bar|\btoc\b|table-of-contents|cookie|skip-link|navbar|site-nav|"
    r"\bmenu\b|pagination|article-votes|was-this-helpful|share-buttons",
    re.IGNORECASE,
)
_BLOCK_TAGS = {
    "address",
    "article",
    "blockquote",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "ul",
}
_SPACE = re.compile(r"\s+")


@dataclass
class HtmlPage:
    """What the loader needs from one HTML help page."""

    meta: dict[str, str] = field(default_factory=dict)
    title: str = ""
    body: str = ""


def parse_html(html: str) -> HtmlPage:
    """Metadata, title and a markdown body for one HTML help page."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(html, "html.parser")

    page = HtmlPage()
    for tag in soup.find_all("meta"):
        name = str(tag.get("name") or tag.get("property") or "").strip().lower()
        content = tag.get("content")
        if name and isinstance(content, str):
            page.meta.setdefault(name, content.strip())
    html_tag = soup.find("html")
    if isinstance(html_tag, Tag) and isinstance(html_tag.get("lang"), str):
        page.meta.setdefault("lang", str(html_tag["lang"]).strip())
    title_tag = soup.find("title")
    page_title = _text(title_tag) if isinstance(title_tag, Tag) else ""

    root = _content_root(soup)
    # An article's own <header> often holds its <h1>: take the title before headers go.
    _strip_chrome(root, keep_headers=True)
    h1 = root.find("h1")
    if isinstance(h1, Tag) and _text(h1):
        page.title = _text(h1)
        h1.decompose()
    else:
        page.title = page_title
    _strip_chrome(root, keep_headers=False)
    page.body = "\n\n".join(_blocks(root)).strip()
    return page


def _content_root(soup: BeautifulSoup) -> Tag:
    for candidate in (soup.find("main"), soup.find(None, {"role": "main"}), soup.find("article")):
        if isinstance(candidate, Tag):
            return candidate
    body = soup.find("body")
    return body if isinstance(body, Tag) else soup


def _is_chrome(tag: Tag, keep_headers: bool) -> bool:
    if tag.name in _CHROME_TAGS:
        return not (keep_headers and tag.name == "header")
    if tag.has_attr("hidden") or tag.get("aria-hidden") == "true":
        return True
    if str(tag.get("role") or "").lower() in _CHROME_ROLES:
        return True
    style = str(tag.get("style") or "").replace(" ", "").lower()
    if "display:none" in style or "visibility:hidden" in style:
        return True
    classes = tag.get("class")
    names = [*(classes if isinstance(classes, list) else []), str(tag.get("id") or "")]
    return bool(_CHROME_NAMES.search(" ".join(names)))


def _strip_chrome(root: Tag, keep_headers: bool) -> None:
    for tag in list(root.find_all(True)):
        if not tag.decomposed and _is_chrome(tag, keep_headers):
            tag.decompose()
    for comment in root.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()


def _text(tag: Tag) -> str:
    return _SPACE.sub(" ", tag.get_text(" ")).strip()


def _inline(node: Tag | NavigableString) -> str:
    """Inline text of a node: spaces collapsed, `<br>` kept as a line break, code in backticks."""
    if isinstance(node, NavigableString):
        return _SPACE.sub(" ", str(node))
    if node.name == "br":
        return "\n"
    if node.name in _BLOCK_TAGS:
        return " " + " ".join(_blocks(node)) + " "
    if node.name == "img":
        return ""
    inner = "".join(_inline(c) for c in node.children if isinstance(c, (Tag, NavigableString)))
    if node.name == "code" and inner.strip():
        return f"`{inner.strip()}`"
    href = node.get("href") if node.name == "a" else None
    if isinstance(href, str) and inner.strip() and not href.startswith(("javascript:", "#")):
        return f"[{inner.strip()}]({href.strip().replace(' ', '%20')})"
    if node.name in ("strong", "b") and inner.strip():
        return f"**{inner.strip()}**"
    return inner


def _clean_lines(text: str) -> str:
    return "\n".join(line.strip() for line in text.split("\n") if line.strip())


def _blocks(node: Tag, depth: int = 0) -> list[str]:
    """Markdown blocks for the children of `node`, in document order."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        text = _clean_lines("".join(run))
        if text:
            out.append(text)
        run.clear()

    for child in node.children:
        if isinstance(child, NavigableString):
            run.append(_inline(child))
            continue
        if not isinstance(child, Tag):
            continue
        if child.name not in _BLOCK_TAGS:
            run.append(_inline(child))
            continue
        flush()
        out.extend(_block(child, depth))
    flush()
    return out


def _block(tag: Tag, depth: int) -> list[str]:
    name = tag.name
    if name in ("h1", "h2"):
        return [f"## {_text(tag)}"] if _text(tag) else []
    if name == "h3":
        return [f"### {_text(tag)}"] if _text(tag) else []
    if name in ("h4", "h5", "h6"):
        return [f"#### {_text(tag)}"] if _text(tag) else []
    if name in ("ul", "ol"):
        return [_list(tag, depth)]
    if name == "table":
        table = _table(tag)
        return [table] if table else []
    if name == "pre":
        code = tag.get_text().strip("\n")
        return [f"```\n{code}\n```"] if code.strip() else []
    if name == "blockquote":
        inner = "\n\n".join(_blocks(tag, depth))
        return ["\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))]
    if name == "hr":
        return []
    return _blocks(tag, depth)


def _list(tag: Tag, depth: int) -> str:
    lines: list[str] = []
    indent = "  " * depth
    for n, item in enumerate(tag.find_all("li", recursive=False), start=1):
        marker = f"{n}." if tag.name == "ol" else "-"
        nested: list[str] = []
        text_parts: list[str] = []
        for child in item.children:
            if isinstance(child, Tag) and child.name in ("ul", "ol"):
                nested.append(_list(child, depth + 1))
            elif isinstance(child, Tag) and child.name in _BLOCK_TAGS:
                text_parts.append(" " + " ".join(_blocks(child, depth + 1)) + " ")
            elif isinstance(child, (Tag, NavigableString)):
                text_parts.append(_inline(child))
        # inline parts joined as written: `<b>Hub</b>.` stays "**Hub**.", not "**Hub** ."
        text = _SPACE.sub(" ", "".join(text_parts)).strip()
        lines.append(f"{indent}{marker} {text}".rstrip())
        lines.extend(nested)
    return "\n".join(lines)


def _table(tag: Tag) -> str:
    rows: list[list[str]] = []
    for tr in tag.find_all("tr"):
        if tr.find_parent("table") is not tag:
            continue  # a nested table's rows belong to the nested table
        cells = [
            _SPACE.sub(" ", _inline(cell)).strip().replace("|", "\\|")
            for cell in tr.find_all(["th", "td"], recursive=False)
            if isinstance(cell, Tag)
        ]
        if cells:
            rows.append(cells)
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines.extend("| " + " | ".join(r) + " |" for r in rows[1:])
    return "\n".join(lines)
