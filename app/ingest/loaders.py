"""Source files to validated `Article`s, or a `LoadError` saying exactly what is wrong.

Formats are chosen by file suffix from `LOADERS`; add a format by adding an entry. Markdown has a
YAML front matter block (`---` lines); HTML carries the same keys as `<meta>` tags (see
`app.ingest.html`). Validation is strict where a mistake would widen who sees an article:
`audience` must be present and one of all/pro/enterprise, never defaulted. Other fields have
defaults: status published, locale en, category general, updatedAt the file's mtime.

Duplicate slugs across files: every file claiming the slug is reported and none is ingested,
because which copy is right cannot be told from the files, and picking one by path order would
change what customers read depending on how a directory happens to sort.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, cast

import yaml

from app.ingest.html import parse_html
from app.ingest.review import review_flags
from app.store.models import AUDIENCES, Article, ArticleStatus, Audience

ARTICLE_STATUSES = ("draft", "published")
_SLUG = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
_LOCALE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class LoadError:
    """A source file that was not ingested, and why."""

    path: str
    reason: str


class InvalidArticle(ValueError):
    """Raised inside a loader; becomes a `LoadError` for the file."""


Loader = Callable[[Path, bytes], Article]


@dataclass
class CorpusLoad:
    """Everything read from a corpus: valid articles, rejected files, and every slug claimed."""

    articles: list[Article] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    claimed_slugs: set[str] = field(default_factory=set)


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


def load_markdown(path: Path, raw: bytes) -> Article:
    """A markdown file with a YAML front matter block."""
    text = decode_utf8(raw)
    if not text.startswith("---\n"):
        raise InvalidArticle("missing front matter: the file must start with a '---' line")
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
    return build_article(meta, text[end.end() :], path)


def load_html(path: Path, raw: bytes) -> Article:
    """An HTML help page: `<meta>` tags for metadata, main content converted to markdown."""
    page = parse_html(decode_utf8(raw))
    meta: dict[str, Any] = {k.lower(): v for k, v in page.meta.items()}
    meta.setdefault("title", page.title)
    meta.setdefault("slug", _slugify(path.stem))
    if "summary" not in meta and "description" in meta:
        meta["summary"] = meta["description"]
    if "locale" not in meta and "lang" in meta:
        meta["locale"] = meta["lang"]
    if "tags" not in meta and "keywords" in meta:
        meta["tags"] = meta["keywords"]
    if "updatedat" in meta:
        meta["updatedAt"] = meta.pop("updatedat")
    if isinstance(meta.get("tags"), str):
        meta["tags"] = meta["tags"].split(",")
    return build_article(meta, page.body, path)


def load_pdf(path: Path, raw: bytes) -> Article:
    """Placeholder: PDF text extraction needs a library this project does not ship."""
    raise InvalidArticle(
        "PDF loader not installed: add a function `(path, raw_bytes) -> Article` that extracts "
        "text (e.g. with pypdf) into markdown, then register it as LOADERS['.pdf'] in "
        "app/ingest/loaders.py"
    )


LOADERS: dict[str, Loader] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
}


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


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
        if isinstance(tag, (dict, list)):
            raise InvalidArticle("tags must be a list of words, not nested values")
        text = str(tag).strip()
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


def build_article(meta: Mapping[str, Any], body: str, path: Path) -> Article:
    """Validate metadata and body into an Article, with its content hash and review flags."""
    slug = _string(meta, "slug")
    if not _SLUG.match(slug):
        raise InvalidArticle(
            f"slug {slug!r} must be lowercase letters, digits and hyphens (e.g. reset-password)"
        )
    title = _string(meta, "title")
    if not title:
        raise InvalidArticle("missing title")
    if "audience" not in meta or meta["audience"] in (None, ""):
        raise InvalidArticle(
            f"missing audience (one of {', '.join(AUDIENCES)}); it is required so an article is "
            "never shown to more customers than intended"
        )
    audience = _string(meta, "audience").lower()
    if audience not in AUDIENCES:
        raise InvalidArticle(
            f"unknown audience {audience!r} (expected one of {', '.join(AUDIENCES)})"
        )
    status = _string(meta, "status", "published").lower()
    if status not in ARTICLE_STATUSES:
        raise InvalidArticle(
            f"unknown status {status!r} (expected one of {', '.join(ARTICLE_STATUSES)})"
        )
    locale = _string(meta, "locale", "en")
    if not _LOCALE.match(locale):
        raise InvalidArticle(f"locale {locale!r} is not a language tag (e.g. en, en-GB)")
    body = body.strip()
    if not body:
        raise InvalidArticle("empty body: nothing to index")
    article = Article(
        id=slug,
        slug=slug,
        title=title,
        body=body,
        summary=_string(meta, "summary", ""),
        category=_string(meta, "category", "general").lower() or "general",
        tags=_tags(meta.get("tags")),
        audience=cast(Audience, audience),
        locale=locale,
        status=cast(ArticleStatus, status),
        updated_at=_updated_at(meta.get("updatedAt"), path),
        source_path=path.as_posix(),
    )
    return finalize(article)


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


def finalize(article: Article) -> Article:
    """The article with its content hash and review flags computed from its fields."""
    return article.model_copy(
        update={
            "content_hash": content_hash(article),
            "review_flags": review_flags(article.title, article.body),
        }
    )


def load_file(path: Path, max_bytes: int, display_path: str | None = None) -> Article | LoadError:
    """One source file as an Article, or a LoadError naming the file and the reason."""
    shown = display_path or path.as_posix()
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(sorted(LOADERS))
        return LoadError(shown, f"unsupported file type {path.suffix or '(none)'!r} ({known})")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return LoadError(
                shown,
                f"file is {size:,} bytes, over the {max_bytes:,}-byte limit "
                "(tuning.max_document_bytes); split it into smaller articles",
            )
        raw = path.read_bytes()
    except OSError as exc:
        return LoadError(shown, f"cannot read file: {exc.strerror or exc}")
    try:
        article = loader(path, raw)
    except InvalidArticle as exc:
        return LoadError(shown, str(exc))
    return article.model_copy(update={"source_path": shown})


def source_files(paths_or_dir: str | Path | Iterable[str | Path]) -> list[tuple[Path, str]]:
    """(file, display path) for every source file: directories are walked, sorted, recursively.

    Inside a directory, hidden files, READMEs and files of unknown type are skipped silently;
    a file named explicitly is always loaded (and rejected if its type is unknown).
    """
    roots = [paths_or_dir] if isinstance(paths_or_dir, (str, Path)) else list(paths_or_dir)
    found: list[tuple[Path, str]] = []
    for root in map(Path, roots):
        if root.is_dir():
            for file in sorted(root.rglob("*")):
                rel = file.relative_to(root)
                if (
                    file.is_file()
                    and not any(part.startswith(".") for part in rel.parts)
                    and file.stem.lower() != "readme"
                    and file.suffix.lower() in LOADERS
                ):
                    found.append((file, _display(file)))
        elif root.exists():
            found.append((root, _display(root)))
        else:
            raise FileNotFoundError(f"no such file or directory: {root}")
    return found


def _display(path: Path) -> str:
    """The path relative to the working directory when under it (shorter reports), else as is."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def load_corpus(paths_or_dir: str | Path | Iterable[str | Path], max_bytes: int) -> CorpusLoad:
    """Load every source file; reject duplicate slugs (all copies) and report every bad file."""
    result = CorpusLoad()
    by_slug: dict[str, list[Article]] = defaultdict(list)
    for path, shown in source_files(paths_or_dir):
        loaded = load_file(path, max_bytes, shown)
        if isinstance(loaded, LoadError):
            result.errors.append(loaded)
        else:
            by_slug[loaded.slug].append(loaded)
    for slug, copies in by_slug.items():
        result.claimed_slugs.add(slug)
        if len(copies) == 1:
            result.articles.append(copies[0])
            continue
        paths = [a.source_path or a.id for a in copies]
        for shown_path in paths:
            others = ", ".join(p for p in paths if p != shown_path)
            result.errors.append(
                LoadError(
                    shown_path, f"duplicate slug {slug!r} (also in {others}); none was ingested"
                )
            )
    return result
