"""A page's language: front matter, else its file name or folder, else its text. Pure.

`page.de.md` and `de/page.md`, `i18n/de/…`, `content/fr/…` name their language; front matter
`locale` or `lang` wins over both. A page that says nothing is detected from its text; a page
without a signal takes the language detected most often among such pages (a folder in one
language is that language's help center), else English.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

LANGUAGES = frozenset(
    [
        "ar",
        "bg",
        "ca",
        "cs",
        "da",
        "de",
        "el",
        "en",
        "es",
        "et",
        "fa",
        "fi",
        "fr",
        "he",
        "hi",
        "hr",
        "hu",
        "id",
        "it",
        "ja",
        "ko",
        "lt",
        "lv",
        "ms",
        "nb",
        "nl",
        "nn",
        "no",
        "pl",
        "pt",
        "ro",
        "ru",
        "sk",
        "sl",
        "sr",
        "sv",
        "th",
        "tr",
        "uk",
        "vi",
        "zh",
    ]
)
_TAG = re.compile(r"^([a-z]{2})(?:[-_]([a-z]{2}|[a-z]{4}))?$", re.IGNORECASE)
DEFAULT = "en"
_REGION_SUFFIX = re.compile(r"[-_.]([a-z]{2}[-_][A-Z]{2})$")


def language_tag(text: str) -> str | None:
    """`de`, `pt-BR`, `zh-Hans` when `text` is a known language tag, else None."""
    m = _TAG.match(text.strip())
    if not m or m.group(1).lower() not in LANGUAGES:
        return None
    lang, region = m.group(1).lower(), m.group(2)
    if not region:
        return lang
    return f"{lang}-{region.upper() if len(region) == 2 else region.capitalize()}"


def declared(meta: Mapping[str, Any]) -> str | None:
    """Front matter `locale` or `lang` as written (validated later by the loader)."""
    lowered = {str(k).lower(): v for k, v in meta.items()}
    for key in ("locale", "lang", "language"):
        value = lowered.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def from_path(rel: PurePosixPath) -> str | None:
    """The language a file name (`page.de.md`) or a folder (`de/`, `i18n/de/`) names."""
    stem_parts = rel.name.split(".")
    if len(stem_parts) >= 3 and (tag := language_tag(stem_parts[-2])):
        return tag
    if (m := _REGION_SUFFIX.search(rel.stem)) and (tag := language_tag(m.group(1))):
        return tag  # `page-fr_FR.md`: a language with its region, written into the name
    for part in rel.parts[:-1]:
        if tag := language_tag(part):
            return tag
    return None


Detector = Callable[[str], "str | None"]


def default_detector() -> Detector:
    """The text detector the project has: `app.language.detect` when present, else the
    function-word detector in `app.language.utterance`."""
    try:
        from app.language.detect import detect_language
    except ImportError:
        from app.language.utterance import detect_language
    return lambda text: detect_language(text)


def page_locales(
    pages: Sequence[tuple[PurePosixPath, Mapping[str, Any], str]],
    detect: Detector | None = None,
) -> list[str]:
    """Each page's locale: declared or named by its path; every other page takes the language
    the text detector finds most often among them (one help center, one language), else en.

    Pages without a signal are not trusted one by one: a short English page full of product
    names is easily taken for French, and a folder mixes languages only with paths or front
    matter saying so."""
    detect = detect or default_detector()
    known = [declared(meta) or from_path(rel) for rel, meta, _ in pages]
    votes: Counter[str] = Counter()
    for (_, _, body), locale in zip(pages, known, strict=True):
        if locale is None and body.strip():
            try:
                guess = detect(body[:4000])
            except Exception:  # a detector failure is not a reason to reject a page
                guess = None
            if guess:
                votes[guess] += 1
    majority = votes.most_common(1)[0][0] if votes else DEFAULT
    return [loc or majority for loc in known]
