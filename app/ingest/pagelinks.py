"""Links between the pages of one docs folder, resolved to `/help/<slug>#anchor`. Pure.

A page answers to every name a site generator gives it: its path in the folder (with or
without suffix, `index`/`_index`/`README` as its folder), its path without a language suffix
(`page.de.md`), front matter `permalink`/`url`/`slug`/`id`/`aliases`/`redirect_from`, and the
same with leading segments removed (`/docs/…`, a language folder, a Jekyll collection folder
such as `_articles`), and with Docusaurus number prefixes (`01-intro`) dropped. A target is
tried relative to the linking page's folder first, then from the folder's root, then by its
last segment when only one page has that name. External targets (a scheme, `//host`) are kept;
a local target that names no page becomes plain text (the caller counts it).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

_SUFFIXES = (".md", ".mdx", ".markdown", ".rst", ".html", ".htm", ".php", ".aspx")
_INDEX = frozenset({"index", "_index", "readme"})
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_NUMBER_PREFIX = re.compile(r"^\d+[-_.]")
_LANG_SUFFIX = re.compile(r"\.[a-z]{2}(?:[-_][A-Za-z]{2,4})?$")
_NAME_KEYS = ("permalink", "url", "slug", "id", "aliases", "redirect_from", "redirect-from")


def _clean(path: str) -> str:
    """A path as a lookup key: lowercase, no suffix, no index file, no slashes at the ends."""
    path = unquote(path).split("?", 1)[0].strip().lower().replace("\\", "/")
    path = posixpath.normpath("/" + path).lstrip("/") if path else ""
    for suffix in _SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    parts = [p for p in path.split("/") if p and p != "."]
    if parts and parts[-1] in _INDEX:
        parts.pop()
    return "/".join(parts)


def _variants(key: str) -> list[str]:
    """The key, without a language suffix, without number prefixes, and every tail of it."""
    forms = {key, _LANG_SUFFIX.sub("", key)}
    forms |= {"/".join(_NUMBER_PREFIX.sub("", p) for p in f.split("/")) for f in list(forms)}
    out: list[str] = []
    for form in forms:
        parts = form.split("/")
        out.extend("/".join(parts[k:]) for k in range(len(parts)))
    return [v for v in out if v]


@dataclass
class SiteLinks:
    """Every page of a load by the names links may use."""

    exact: dict[str, str] = field(default_factory=dict)  # full key → slug
    tails: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    anchors: dict[str, set[str]] = field(default_factory=dict)

    def add(self, rel_path: str, slug: str, meta: Mapping[str, Any] | None = None) -> None:
        """Register one page under its path and every name its front matter gives it."""
        names = [rel_path, *_declared_names(meta or {})]
        for name in names:
            key = _clean(name)
            for variant in _variants(key):
                self.tails[variant].add(slug)
            if key or name == rel_path:  # "" is the folder's own index page
                self.exact.setdefault(key, slug)
                self.exact.setdefault(_LANG_SUFFIX.sub("", key), slug)

    def slug_for(self, target_path: str, folder: str) -> str | None:
        """The page a local path names, seen from a page in `folder`; None when none does."""
        raw = unquote(target_path).strip()
        if not raw or raw.startswith("#"):
            return None
        tries = [_clean(raw)] if raw.startswith("/") else [_clean(posixpath.join(folder, raw))]
        tries.append(_clean(raw))
        for key in tries:
            if key in self.exact:
                return self.exact[key]
        for key in tries:
            for variant in _variants(key):
                found = self.tails.get(variant, set())
                if len(found) == 1:
                    return next(iter(found))
        return None

    def resolve(self, target: str, folder: str) -> str | None:
        """`/help/<slug>#anchor` for a page of the folder, "" for a dead local target, None to
        keep the link as written (external, mail, a same-page anchor)."""
        target = target.strip()
        if not target or target.startswith(("#", "//", "/help/")) or _SCHEME.match(target):
            return None
        path, _, fragment = target.partition("#")
        slug = self.slug_for(path, folder)
        if slug is None:
            return ""
        return f"/help/{slug}" + (f"#{fragment}" if fragment else "")


def _declared_names(meta: Mapping[str, Any]) -> Iterable[str]:
    lowered = {str(k).lower(): v for k, v in meta.items()}
    for key in _NAME_KEYS:
        value = lowered.get(key)
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, (str, int)) and str(v).strip():
                yield str(v)
