"""Source files to validated `Article`s, or a `LoadError` saying exactly what is wrong.

Formats are chosen by file suffix from `LOADERS`; add a format by adding an entry (a function
`(path, raw_bytes) -> SourceDoc`). A file that holds many articles (a Zendesk export, `.json`)
has a `BUNDLES` entry instead, which may say the file is not its format (`NotMine`: skipped and
reported, e.g. a `package.json` in a docs folder). Loading is lenient about what a docs folder
usually lacks and strict where a mistake would widen who sees an article:

- slug: front matter `slug` (slugified), else the file name (`index`/`_index` → its folder's
  name); two files whose *derived* slugs collide are both kept, each slugged from its relative
  path (`sync-security-and-privacy`). Two files that *declare* the same slug are both rejected:
  which copy the author meant cannot be told from the files, and picking one by path order would
  change what customers read depending on how a directory happens to sort.
- title: front matter `title`, else the first `# H1`, else the file name.
- summary: front matter `summary` or `description`, else the first paragraph of prose.
- audience: front matter `audience`, else `default_audience` (the `DEFAULT_AUDIENCE` setting).
  When neither says, the file is rejected and listed: entitlement fails closed, so an article is
  never shown to more customers than someone decided.
- status: `status`, or `draft: true` / `publish: false` → draft; default published. locale
  (`locale`/`lang`, default en), category (`category`, else the top folder, else general), tags
  (`tags`/`keywords`), updatedAt (else the file's mtime).
- the body is normalised from Obsidian/MkDocs/Docusaurus/MDX dialects (`app.ingest.dialects`);
  wiki-links and embeds resolve against every file of the same load.

Every problem a file has is reported at once (not one field per run), and every file of the
folder is reported in the same pass; unresolved embeds are warnings, not rejections.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, cast
from urllib.parse import unquote

import yaml

from app.ingest.copies import print_copies
from app.ingest.dialects import (
    Note,
    NoteIndex,
    first_paragraph,
    imports_modules,
    normalise,
    snippet_imports,
)
from app.ingest.html import parse_html
from app.ingest.ignore import ignore_rules, mintlify_hidden, mintlify_snippet
from app.ingest.leaks import Leak, find_leaks, summarise
from app.ingest.pagelang import declared, language_tag, page_locales
from app.ingest.pagelinks import SiteLinks
from app.ingest.pdf import PdfError, pdf_to_markdown
from app.ingest.review import review_flags
from app.ingest.rst import LOADING, RstError, excluded, loading_folder, rst_page
from app.ingest.rst_project import one_load
from app.ingest.zendesk import NotZendesk, zendesk_items
from app.links import anchors_of, heading_anchor
from app.store.models import AUDIENCES, Article, ArticleStatus, Audience

ARTICLE_STATUSES = ("draft", "published")
_SLUG = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
_LOCALE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")
_INDEX_STEMS = frozenset({"index", "_index", "readme"})


@dataclass(frozen=True, slots=True)
class LoadError:
    """A source file that was not ingested (or, as a warning, ingested with a caveat), and why."""

    path: str
    reason: str


class InvalidArticle(ValueError):
    """Raised inside a loader; becomes a `LoadError` for the file."""


class NotMine(ValueError):
    """Raised by a bundle loader for a file that is not its format: skipped, with the reason."""


@dataclass(frozen=True, slots=True)
class SourceDoc:
    """What a loader read: metadata keys (any case) and a markdown body, not yet validated."""

    meta: Mapping[str, Any]
    body: str
    mdx: bool = False
    converted: bool = False  # already plain markdown from a converter (PDF): no dialect pass
    warnings: tuple[str, ...] = ()


Loader = Callable[[Path, bytes], SourceDoc]
# a file holding many articles: (label appended to the path in reports, the doc or an error)
BundleLoader = Callable[[Path, bytes], list[tuple[str, "SourceDoc | str"]]]


@dataclass
class CorpusLoad:
    """Everything read from a corpus: valid articles, rejected files, and every slug claimed."""

    articles: list[Article] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    warnings: list[LoadError] = field(default_factory=list)
    claimed_slugs: set[str] = field(default_factory=set)
    skipped: list[LoadError] = field(default_factory=list)  # files of another format
    leaks: dict[str, list[Leak]] = field(default_factory=dict)  # file → markers left in it


def decode_utf8(raw: bytes) -> str:
    """The file's text; non-UTF-8 input is rejected rather than guessed at."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArticle(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "re-save the file as UTF-8"
        ) from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def load_markdown(path: Path, raw: bytes) -> SourceDoc:
    """Markdown, with an optional YAML front matter block."""
    text = decode_utf8(raw)
    mdx = path.suffix.lower() == ".mdx" or imports_modules(text)
    if not text.startswith("---\n"):
        return SourceDoc({}, text, mdx)
    end = _FRONT_MATTER_END.search(text, 4)
    if end is None:
        raise InvalidArticle("malformed front matter: no closing '---' line")
    try:
        meta = yaml.safe_load(text[4 : end.start()])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        problem = f"{context}: {problem}" if context else problem
        raise InvalidArticle(f"malformed front matter: {problem}{where}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InvalidArticle("malformed front matter: expected 'key: value' lines")
    return SourceDoc(meta, text[end.end() :], mdx)


def load_html(path: Path, raw: bytes) -> SourceDoc:
    """An HTML help page: `<meta>` tags for metadata, main content converted to markdown."""
    page = parse_html(decode_utf8(raw))
    meta: dict[str, Any] = dict(page.meta)
    if page.title:
        meta.setdefault("title", page.title)
    if isinstance(meta.get("tags"), str):
        meta["tags"] = meta["tags"].split(",")
    return SourceDoc(meta, page.body)


def load_pdf(path: Path, raw: bytes) -> SourceDoc:
    """A PDF manual (`app.ingest.pdf`): markdown with page markers, headings and tables.

    Metadata comes from a sidecar `<name>.pdf.yaml` when there is one (the same keys as front
    matter: audience, slug, title, category, tags, locale, status), else from the PDF's own
    title and keywords. Scanned pages are warnings; a PDF with no text layer at all is rejected.
    """
    try:
        doc = pdf_to_markdown(raw)
    except PdfError as exc:
        raise InvalidArticle(str(exc)) from None
    scanned = doc.scanned_pages
    if not doc.body.strip():
        what = f"all {doc.pages} pages are images" if scanned else "no text on any page"
        raise InvalidArticle(
            f"no text layer ({what}: a scan?); run OCR on it (e.g. ocrmypdf) and ingest again"
        )
    meta: dict[str, Any] = {"summary": doc.summary, "tags": doc.tags}
    if doc.title:
        meta["title"] = doc.title
    meta.update(_sidecar(path))
    warnings: list[str] = []
    if scanned:
        pages = ", ".join(map(str, scanned))
        warnings.append(
            f"{len(scanned)} of {doc.pages} pages have no text layer (page {pages}: scanned?); "
            "they are not searchable until the file is OCRed"
        )
    return SourceDoc(meta, doc.body, converted=True, warnings=tuple(warnings))


def load_rst(path: Path, raw: bytes) -> SourceDoc:
    """A reStructuredText page (Sphinx), as markdown with its sections (`app.ingest.rst`)."""
    if excluded(path, LOADING.get()):
        raise NotMine("left out by the project's conf.py (exclude_patterns)")
    try:
        meta, body = rst_page(decode_utf8(raw), path, LOADING.get())
    except RstError as exc:
        raise InvalidArticle(str(exc)) from None
    return SourceDoc(meta, body)


def _sidecar(path: Path) -> dict[str, Any]:
    """Front-matter keys from `<file>.yaml` beside a file that cannot carry its own."""
    side = path.with_name(path.name + ".yaml")
    if not side.is_file():
        return {}
    try:
        meta = yaml.safe_load(side.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as exc:
        raise InvalidArticle(f"{side.name}: unreadable metadata ({exc})") from None
    if not isinstance(meta, dict):
        raise InvalidArticle(f"{side.name}: expected 'key: value' lines")
    return {str(k): v for k, v in meta.items()}


def load_zendesk(path: Path, raw: bytes) -> list[tuple[str, SourceDoc | str]]:
    """A Zendesk Help Center articles export (`app.ingest.zendesk`): one doc per article."""
    try:
        items = zendesk_items(path, raw)
    except NotZendesk as exc:
        raise NotMine(str(exc)) from None
    except (ValueError, yaml.YAMLError, OSError) as exc:  # the segments table
        raise InvalidArticle(str(exc)) from None
    out: list[tuple[str, SourceDoc | str]] = []
    for item in items:
        if item.error is not None:
            out.append((item.label, item.error))
            continue
        meta = dict(item.meta)
        meta["category"] = slugify(str(meta.get("category") or ""))
        out.append((item.label, SourceDoc(meta, parse_html(item.html).body)))
    return out


BUNDLES: dict[str, BundleLoader] = {".json": load_zendesk}

LOADERS: dict[str, Loader] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".mdx": load_markdown,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
    ".rst": load_rst,
}


def slugify(text: str) -> str:
    """Lowercase ASCII letters and digits joined by hyphens (accents dropped)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def _string(meta: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = meta.get(key, default)
    if value is None:
        if default is None:
            raise InvalidArticle(f"missing {key}")
        return default
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidArticle(f"{key} must be text, got {type(value).__name__}")
    return str(value).strip()


def _tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        raise InvalidArticle("tags must be a list, e.g. tags: [billing, invoices]")
    tags: list[str] = []
    for tag in value:
        if isinstance(tag, dict):  # GitBook writes `- tag: beta` with `primary: true` beside it
            tag = next((tag[k] for k in ("tag", "name") if isinstance(tag.get(k), str)), tag)
        if isinstance(tag, (dict, list)):
            raise InvalidArticle("tags must be a list of words, not nested values")
        # lowercased, as every other place a tag is compared sees it (search uses analysed tokens)
        text = unicodedata.normalize("NFKC", str(tag)).strip().lower()
        if text and text not in tags:
            tags.append(text)
    return tags


def _updated_at(value: Any, path: Path) -> datetime:
    if value is None or value == "":
        return datetime.fromtimestamp(int(path.stat().st_mtime), UTC) if path.exists() else _EPOCH
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidArticle(f"updatedAt {value!r} is not a date (use YYYY-MM-DD)") from None
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise InvalidArticle(f"updatedAt {value!r} is not a date (use YYYY-MM-DD)")


def _first_h1(body: str) -> str | None:
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (m := _H1.match(line)):
            return m.group(1).strip()
    return None


def _title_from_name(rel: PurePosixPath) -> str:
    stem = rel.parent.name if rel.stem.lower() in _INDEX_STEMS and rel.parent.name else rel.stem
    text = re.sub(r"[-_]+", " ", stem).strip() if " " not in stem else stem.strip()
    return text[:1].upper() + text[1:]


def _status(meta: Mapping[str, Any]) -> str:
    if meta.get("draft") is True or meta.get("publish") is False:
        return "draft"
    return _string(meta, "status", "published").lower()


def build_article(
    meta: Mapping[str, Any],
    body: str,
    path: Path,
    *,
    slug: str | None = None,
    rel: PurePosixPath | None = None,
    default_audience: str | None = None,
    source_text: str | None = None,
) -> Article:
    """Validate metadata and (normalised) body into an Article; every problem in one message."""
    meta = {str(k).lower(): v for k, v in meta.items()}
    rel = rel or PurePosixPath(path.name)
    problems: list[str] = []

    def field_or_problem(fn: Callable[[], Any], default: Any) -> Any:
        try:
            return fn()
        except InvalidArticle as exc:
            problems.append(str(exc))
            return default

    slug = slug or field_or_problem(lambda: _string(meta, "slug"), "")
    if slug and not _SLUG.match(slug):
        problems.append(
            f"slug {slug!r} must be lowercase letters, digits and hyphens (e.g. reset-password)"
        )
    body = body.strip()
    title = field_or_problem(lambda: _string(meta, "title", ""), "")
    title = title or _first_h1(body) or _title_from_name(rel)
    first, _, rest = body.partition("\n")
    if _H1.match(first):
        body = rest.strip()  # a leading H1 is the page title, which the page already shows
    raw_audience = meta.get("audience")
    if raw_audience in (None, ""):
        raw_audience = default_audience
    audience = "all"
    if raw_audience in (None, ""):
        problems.append(
            f"missing audience (one of {', '.join(AUDIENCES)}): add `audience:` to the front "
            "matter or set DEFAULT_AUDIENCE; an article is never shown to more customers than "
            "someone decided"
        )
    else:
        audience = field_or_problem(lambda: _string({"a": raw_audience}, "a").lower(), "all")
        if audience not in AUDIENCES:
            problems.append(
                f"unknown audience {audience!r} (expected one of {', '.join(AUDIENCES)})"
            )
    status = field_or_problem(lambda: _status(meta), "published")
    if status not in ARTICLE_STATUSES:
        problems.append(
            f"unknown status {status!r} (expected one of {', '.join(ARTICLE_STATUSES)})"
        )
    locale = field_or_problem(
        lambda: _string(meta, "locale", "") or _string(meta, "lang", "en"), "en"
    ).replace("_", "-")
    if not _LOCALE.match(locale):
        problems.append(f"locale {locale!r} is not a language tag (e.g. en, en-GB)")
    summary = field_or_problem(
        lambda: _string(meta, "summary", "") or _string(meta, "description", ""), ""
    )
    folder = slugify(rel.parts[0]) if len(rel.parts) > 1 else ""
    category = field_or_problem(lambda: _string(meta, "category", ""), "").lower()
    tags = field_or_problem(lambda: _tags(meta.get("tags", meta.get("keywords"))), [])
    updated = field_or_problem(
        lambda: _updated_at(meta.get("updatedat", meta.get("last_update")), path), _EPOCH
    )
    if not body:
        problems.append("empty body: nothing to index")
    if problems:
        raise InvalidArticle("; ".join(problems))
    article = Article(
        id=slug,
        slug=slug,
        title=title,
        body=body,
        summary=summary or first_paragraph(body),
        category=category or folder or "general",
        tags=tags,
        audience=cast(Audience, audience),
        locale=locale,
        status=cast(ArticleStatus, status),
        updated_at=updated,
        source_path=path.as_posix(),
    )
    return finalize(article, source_text)


def content_hash(article: Article) -> str:
    """sha256 over every field that shapes the article's chunks or their copied metadata."""
    fields = {
        "slug": article.slug,
        "title": article.title.strip(),
        "body": article.body.strip(),
        "summary": article.summary.strip(),
        "category": article.category,
        "tags": article.tags,
        "audience": article.audience,
        "locale": article.locale,
        "status": article.status,
        "updatedAt": article.updated_at.isoformat(),
    }
    encoded = json.dumps(fields, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


def finalize(article: Article, source_text: str | None = None) -> Article:
    """The article with its content hash and review flags computed from its fields.

    `source_text` is the file's text before normalisation: instructions hidden in an HTML comment
    are stripped from the body, but an author who hid them still deserves a human look.
    """
    flags = review_flags(article.title, article.body)
    if not flags and source_text is not None:
        flags = review_flags(article.title, source_text)
    return article.model_copy(update={"content_hash": content_hash(article), "review_flags": flags})


def source_files(
    paths_or_dir: str | Path | Iterable[str | Path], skipped: list[LoadError] | None = None
) -> list[tuple[Path, str, str]]:
    """(file, display path, path relative to its root) for every source file, sorted.

    Directories are walked recursively; hidden files and folders (`.obsidian`), `node_modules`,
    a README at the root, a `SUMMARY.md` at the root (the table of contents of an mdBook or a
    GitBook space: links, no answers) and files of unknown type are skipped silently; files the
    folder's generator does not publish as pages (`.mintignore`, `app.ingest.ignore`) are
    skipped and listed in `skipped`; a file named explicitly is always loaded (and rejected if
    its type is unknown).
    """
    roots = [paths_or_dir] if isinstance(paths_or_dir, (str, Path)) else list(paths_or_dir)
    found: list[tuple[Path, str, str]] = []
    for root in map(Path, roots):
        if root.is_dir():
            rules = ignore_rules(root)
            for file in sorted(root.rglob("*")):
                rel = file.relative_to(root)
                if not (file.is_file() and _walked(rel)):
                    continue
                reason = rules.reason(PurePosixPath(rel.as_posix()))
                if reason is None:
                    found.append((file, _display(file), rel.as_posix()))
                elif skipped is not None:
                    skipped.append(LoadError(_display(file), reason))
        elif root.exists():
            found.append((root, _display(root), root.name))
        else:
            raise FileNotFoundError(f"no such file or directory: {root}")
    return found


def _walked(rel: Path) -> bool:
    """Whether a file found in a folder walk is a source file (see `source_files`)."""
    top = len(rel.parts) == 1
    return (
        not any(p.startswith(".") or p == "node_modules" for p in rel.parts)
        and not (top and rel.stem.lower() == "readme")
        and not (top and rel.name == "SUMMARY.md")  # a book's contents
        and (rel.suffix.lower() in LOADERS or rel.suffix.lower() in BUNDLES)
    )


def _display(path: Path) -> str:
    """The path relative to the working directory when under it (shorter reports), else as is."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _folder_of(path: Path, rel: str) -> Path:
    """The folder being loaded that holds `path` at relative path `rel`."""
    depth = len(PurePosixPath(rel).parts)
    return path.parents[depth - 1] if depth <= len(path.parents) else path.parent


def _read(path: Path, max_bytes: int, max_pdf_bytes: int | None = None) -> SourceDoc:
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(sorted([*LOADERS, *BUNDLES]))
        raise InvalidArticle(f"unsupported file type {path.suffix or '(none)'!r} ({known})")
    return loader(path, _raw(path, max_bytes, max_pdf_bytes))


def _raw(path: Path, max_bytes: int, max_pdf_bytes: int | None = None) -> bytes:
    setting = "tuning.max_document_bytes"
    if path.suffix.lower() == ".pdf" and max_pdf_bytes is not None:
        max_bytes, setting = max_pdf_bytes, "tuning.max_pdf_bytes"
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InvalidArticle(
                f"file is {size:,} bytes, over the {max_bytes:,}-byte limit "
                f"({setting}); split it into smaller articles"
            )
        return path.read_bytes()
    except OSError as exc:
        raise InvalidArticle(f"cannot read file: {exc.strerror or exc}") from None


@dataclass
class _Source:
    path: Path
    shown: str
    rel: PurePosixPath
    doc: SourceDoc
    slug: str = ""
    declared: bool = False


def _declared_slug(doc: SourceDoc) -> str | None:
    for key, value in doc.meta.items():
        if str(key).lower() == "slug" and value not in (None, ""):
            return slugify(str(value)) or None
    return None


def _derived_slug(rel: PurePosixPath) -> str:
    stem = rel.stem
    if "." in stem and language_tag(stem.rsplit(".", 1)[1]):
        stem = stem.rsplit(".", 1)[0]  # `page.de.md` is the page `page`, in German
    if stem.lower() in _INDEX_STEMS and len(rel.parts) > 1:
        return slugify(rel.parent.as_posix())
    return slugify(stem)


def _assign_slugs(sources: list[_Source], errors: list[LoadError]) -> list[_Source]:
    """Declared slugs win; colliding derived slugs fall back to their relative path."""
    for src in sources:
        declared = _declared_slug(src.doc)
        src.slug, src.declared = (declared, True) if declared else (_derived_slug(src.rel), False)
    declared_counts = Counter(s.slug for s in sources if s.declared)
    derived_counts = Counter(s.slug for s in sources if not s.declared)
    for src in sources:
        if not src.declared and (derived_counts[src.slug] > 1 or declared_counts[src.slug]):
            src.slug = slugify(src.rel.with_suffix("").as_posix())
    by_slug: dict[str, list[_Source]] = defaultdict(list)
    for src in sources:
        by_slug[src.slug].append(src)
    kept: list[_Source] = []
    for slug, copies in by_slug.items():
        if len(copies) == 1:
            kept.append(copies[0])
            continue
        paths = [c.shown for c in copies]
        for shown in paths:
            others = ", ".join(p for p in paths if p != shown)
            errors.append(
                LoadError(shown, f"duplicate slug {slug!r} (also in {others}); none was ingested")
            )
    return kept


def _aliases(meta: Mapping[str, Any]) -> list[str]:
    value = meta.get("aliases", meta.get("alias"))
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _read_one(
    path: Path,
    shown: str,
    rel: str,
    limits: tuple[int, int | None],
    result: CorpusLoad,
    sources: list[_Source],
) -> None:
    """One source file's documents into `sources`, or its problem into `result`."""
    max_bytes, max_pdf_bytes = limits
    try:
        bundle = BUNDLES.get(path.suffix.lower())
        if bundle is None:
            with loading_folder(_folder_of(path, rel)):
                single = _read(path, max_bytes, max_pdf_bytes)
            sources.append(_Source(path, shown, PurePosixPath(rel), single))
            return
        for label, doc in bundle(path, _raw(path, max_bytes)):
            if isinstance(doc, str):
                result.errors.append(LoadError(f"{shown}{label}", doc))
            else:
                sources.append(_Source(path, f"{shown}{label}", PurePosixPath(rel), doc))
    except NotMine as exc:
        result.skipped.append(LoadError(shown, str(exc)))
    except InvalidArticle as exc:
        result.errors.append(LoadError(shown, str(exc)))


def load_corpus(
    paths_or_dir: str | Path | Iterable[str | Path],
    max_bytes: int,
    *,
    default_audience: str | None = None,
    max_pdf_bytes: int | None = None,
) -> CorpusLoad:
    """Load every source file: each file's problems at once, every bad file in the same pass.
    `max_pdf_bytes` is the size limit for PDFs (default: `max_bytes`)."""
    result = CorpusLoad()
    sources: list[_Source] = []
    with one_load():
        for path, shown, rel in source_files(paths_or_dir, result.skipped):
            _read_one(path, shown, rel, (max_bytes, max_pdf_bytes), result, sources)
    claimed: set[str] = set()
    kept = _assign_slugs(sources, result.errors)
    claimed.update(s.slug for s in sources)
    not_pages = _not_pages(kept)
    for src in kept:
        if src.rel.as_posix() in not_pages:
            result.skipped.append(LoadError(src.shown, not_pages[src.rel.as_posix()]))
    pages = [p for p in _normalise_all(kept) if p[0].rel.as_posix() not in not_pages]
    pages = _drop_copies(pages, result.skipped)
    anchors = {src.slug: anchors_of(body) for src, body, _ in pages}
    locales = page_locales([(src.rel, src.doc.meta, body) for src, body, _ in pages])
    for (src, body, warnings), locale in zip(pages, locales, strict=True):
        body = fix_anchors(body, src.slug, anchors)
        leaks = find_leaks(body)
        if leaks:
            result.leaks[src.shown] = leaks
            warnings.append(summarise(leaks))
        result.warnings.extend(LoadError(src.shown, w) for w in warnings)
        meta = dict(src.doc.meta)
        if declared(meta) is None:
            meta["locale"] = locale
        try:
            article = build_article(
                meta,
                body,
                src.path,
                slug=src.slug,
                rel=src.rel,
                default_audience=default_audience,
                source_text=src.doc.body,
            )
        except InvalidArticle as exc:
            result.errors.append(LoadError(src.shown, str(exc)))
            continue
        result.articles.append(article.model_copy(update={"source_path": src.shown}))
    result.articles, twins = _drop_twins(result.articles, result.skipped)
    result.articles = _unlink_missing(result.articles, twins)
    result.claimed_slugs = claimed
    result.errors.sort(key=lambda e: e.path)
    return result


_HELP_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(/help/([a-z0-9_-]+)(#[^)\s]*)?\)")


def _drop_twins(
    articles: list[Article], skipped: list[LoadError]
) -> tuple[list[Article], dict[str, str]]:
    """A page with another page's title, text, audience and locale (one page copied into a
    second folder) is served once, as the copy nearest the docs root (then the first by path):
    the other is listed as skipped, and links to it lead to its twin. Returns the pages and the
    slug each dropped twin now stands for."""
    first: dict[tuple[str, ...], Article] = {}
    twins: dict[str, str] = {}

    def depth(a: Article) -> tuple[int, str]:
        path = a.source_path or a.slug
        return path.count("/"), path

    for article in sorted(articles, key=depth):
        body = " ".join(article.body.split())
        key = (article.title, body, article.audience, article.locale, article.status)
        kept = first.setdefault(key, article)
        if kept is not article:
            twins[article.slug] = kept.slug
            where = article.source_path or article.slug
            skipped.append(LoadError(where, f"the same page as {kept.source_path or kept.slug}"))
    return [a for a in articles if a.slug not in twins], twins


def _unlink_missing(articles: list[Article], twins: Mapping[str, str]) -> list[Article]:
    """Links to a dropped twin lead to the page it copies; links to a page that did not load,
    or is not published, become plain text: a help page never links to a 404."""
    served = {a.slug for a in articles if a.status == "published"}

    def repl(m: re.Match[str]) -> str:
        slug = twins.get(m.group(2), m.group(2))
        if slug not in served:
            return m.group(1)
        return (
            m.group(0) if slug == m.group(2) else f"[{m.group(1)}](/help/{slug}{m.group(3) or ''})"
        )

    out = []
    for article in articles:
        body = _HELP_LINK.sub(repl, article.body)
        out.append(
            article if body == article.body else finalize(article.model_copy(update={"body": body}))
        )
    return out


def _not_pages(kept: list[_Source]) -> dict[str, str]:
    """The files that are not pages, each with the reason: snippets, imported by MDX pages of
    the load (Mintlify's `/snippets/`, a Docusaurus partial) or in a Mintlify project's
    `snippets/` folder, which are read where they are used; and pages a Mintlify project
    hides (`mintlify_hidden`)."""
    found = {
        path: "a snippet other pages import: not a page"
        for src in kept
        if src.doc.mdx
        for path in snippet_imports(src.doc.body, src.rel.parent.as_posix().strip("."))
    }
    for src in kept:
        rel = src.rel.as_posix()
        if rel in found:
            continue
        root = _folder_of(src.path, rel)
        if mintlify_snippet(src.rel, root):
            found[rel] = "in a Mintlify project's snippets/ folder (always a snippet): not a page"
        elif mintlify_hidden(src.rel, root, dict(src.doc.meta)):
            found[rel] = "hidden: true in a Mintlify project (out of its search and AI context)"
    return found


def _drop_copies(
    pages: list[tuple[_Source, str, list[str]]], skipped: list[LoadError]
) -> list[tuple[_Source, str, list[str]]]:
    """PDFs whose text mostly repeats the load's pages of other formats are copies of them (a
    print or PDF export, `app.ingest.copies`): skipped, so answers cite the page itself."""
    pdfs = {src.shown: body for src, body, _ in pages if src.doc.converted}
    others = [body for src, body, _ in pages if not src.doc.converted]
    if not pdfs or not others:
        return pages
    found = print_copies(pdfs, others)
    for shown, share in sorted(found.items()):
        reason = f"a copy of the folder's pages ({share:.0%} of its text is in them): not a page"
        skipped.append(LoadError(shown, reason))
    return [p for p in pages if p[0].shown not in found]


def _normalise_all(kept: list[_Source]) -> list[tuple[_Source, str, list[str]]]:
    """Each page's body as CommonMark, with links resolved against every page of the load,
    and its warnings (unresolved embeds, dead links, template tags that were removed)."""
    index = NoteIndex()
    links = SiteLinks()
    for src in kept:
        folder = src.rel.parent.as_posix() if src.rel.parent.name else ""
        index.add(src.rel.as_posix(), Note(src.slug, src.doc.body, folder), _aliases(src.doc.meta))
        links.add(src.rel.as_posix(), src.slug, src.doc.meta)
    out: list[tuple[_Source, str, list[str]]] = []
    for src in kept:
        warnings: list[str] = list(src.doc.warnings)
        if src.doc.converted:
            out.append((src, src.doc.body, warnings))
            continue
        removed: Counter[str] = Counter()
        found: list[str] = []
        body = normalise(
            src.doc.body,
            index,
            folder=src.rel.parent.as_posix() if src.rel.parent.name else "",
            self_slug=src.slug,
            warnings=found,
            mdx=src.doc.mdx,
            meta=src.doc.meta,
            links=links.resolve,
            removed=removed,
        )
        warnings.extend(_grouped(found))
        if removed:
            kinds = ", ".join(f"{k} ×{n}" for k, n in removed.most_common())
            warnings.append(f"removed {removed.total()} template tags it cannot render ({kinds})")
        out.append((src, body, warnings))
    return out


def _grouped(warnings: list[str]) -> list[str]:
    """Dead links in one line per page (a page may have dozens); other warnings as they are."""
    dead = [w for w in warnings if w.startswith("link to ")]
    rest = [w for w in warnings if not w.startswith("link to ")]
    if dead:
        targets = ", ".join(w.split("'")[1] if "'" in w else w for w in dead[:5])
        more = f" and {len(dead) - 5} more" if len(dead) > 5 else ""
        rest.append(f"{len(dead)} links to pages not in the folder, kept as text: {targets}{more}")
    return rest


_HELP_ANCHOR = re.compile(r"\]\((/help/([a-z0-9_-]+))?#([^)\s]+)\)")


def fix_anchors(body: str, slug: str, anchors: Mapping[str, set[str]]) -> str:
    """Links keep an anchor only if the target page has it (tried as written, then as its
    heading text would make it); else they point at the page itself."""

    def repl(m: re.Match[str]) -> str:
        page, target = m.group(1), m.group(2) or slug
        known = anchors.get(target, set())
        fragment = m.group(3)
        for candidate in (fragment, heading_anchor(unquote(fragment).replace("-", " "))):
            if candidate in known:
                return f"]({page or ''}#{candidate})"
        return f"]({page})" if page else "](#)"

    return _HELP_ANCHOR.sub(repl, body)


def load_file(
    path: Path,
    max_bytes: int,
    display_path: str | None = None,
    *,
    default_audience: str | None = None,
) -> Article | LoadError:
    """One source file as an Article, or a LoadError naming the file and the reason."""
    corpus = load_corpus([path], max_bytes, default_audience=default_audience)
    shown = display_path or path.as_posix()
    if corpus.articles:
        return corpus.articles[0].model_copy(update={"source_path": shown})
    reason = corpus.errors[0].reason if corpus.errors else "nothing loaded"
    return LoadError(shown, reason)
