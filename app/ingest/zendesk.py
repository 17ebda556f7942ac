"""Zendesk Help Center articles, as its Articles API returns them, into article metadata.

Input format: a JSON file shaped like a response of `GET /api/v2/help_center/articles.json`
(`{"articles": [...], "next_page": ..., ...}`), optionally with `"sections"` and `"categories"`
lists, as `?include=sections,categories` sideloads them. Several pages may sit side by side as
separate files; `sections.json` / `categories.json` (the responses of those endpoints) in the
same folder are read too. Per article: `id`, `title` (or `name`), `body` (HTML), `locale`,
`source_locale`, `draft`, `section_id`, `user_segment_id`, `label_names`, `edited_at` /
`updated_at`, `html_url`.

Mapping:
- slug `zd-<id>` (`zd-<id>-<locale>` for a translation): stable when an article is renamed;
- audience: `user_segment_id` null (everyone) → `all`; any other segment through the table in
  `zendesk-segments.yaml` beside the export (`<segment id>: all|pro|enterprise`); a segment the
  table does not name rejects the article: it is never shown to more customers than someone
  decided;
- status: `draft: true` → draft (stored, never served); locale: the language subtag (`en-us` →
  `en`, as customers' locales are kept); category: the section's name; tags: `label_names`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SEGMENTS_FILE = "zendesk-segments.yaml"
AUDIENCES = ("all", "pro", "enterprise")


@dataclass(frozen=True, slots=True)
class ZendeskItem:
    """One article of an export: its label for reports, metadata and HTML body, or an error."""

    label: str
    meta: dict[str, Any]
    html: str = ""
    error: str | None = None


class NotZendesk(ValueError):
    """The JSON is not a Help Center articles export."""


def parse_export(raw: bytes) -> dict[str, Any]:
    """The export's top-level object; `NotZendesk` when it is not one."""
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotZendesk(f"not JSON ({exc})") from None
    if isinstance(data, dict) and not isinstance(data.get("articles"), list):
        for key in ("sections", "categories"):
            if isinstance(data.get(key), list):
                raise NotZendesk(f"Zendesk {key}: read with the articles export beside it")
    if not isinstance(data, dict) or not isinstance(data.get("articles"), list):
        raise NotZendesk('not a Zendesk Help Center export (no "articles" list)')
    return data


def segments_table(folder: Path) -> dict[str, str]:
    """`zendesk-segments.yaml` beside the export: user segment id → audience."""
    path = folder / SEGMENTS_FILE
    if not path.is_file():
        return {}
    loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(loaded, dict):
        raise ValueError(f"{SEGMENTS_FILE}: expected '<segment id>: <audience>' lines")
    table = {str(k).strip(): str(v).strip().lower() for k, v in loaded.items()}
    wrong = {k: v for k, v in table.items() if v not in AUDIENCES}
    if wrong:
        raise ValueError(
            f"{SEGMENTS_FILE}: unknown audience for segment(s) "
            + ", ".join(f"{k}: {v!r}" for k, v in wrong.items())
            + f" (expected one of {', '.join(AUDIENCES)})"
        )
    return table


def _named(folder: Path, data: Mapping[str, Any], key: str) -> dict[str, str]:
    """id → name for sections or categories: sideloaded in the file, or in `<key>.json`."""
    rows = data.get(key)
    if not isinstance(rows, list):
        side = folder / f"{key}.json"
        try:
            rows = json.loads(side.read_text(encoding="utf-8")).get(key) if side.is_file() else []
        except (OSError, json.JSONDecodeError, AttributeError):
            rows = []
    return {
        str(r["id"]): str(r.get("name") or "")
        for r in rows or []
        if isinstance(r, dict) and "id" in r
    }


def zendesk_items(path: Path, raw: bytes) -> list[ZendeskItem]:
    """Every article of the export at `path`; raises `NotZendesk` or `ValueError` (segments)."""
    data = parse_export(raw)
    folder = path.parent
    segments = segments_table(folder)
    sections = _named(folder, data, "sections")
    section_category = {
        str(r["id"]): str(r.get("category_id"))
        for r in data.get("sections") or []
        if isinstance(r, dict) and "id" in r
    }
    categories = _named(folder, data, "categories")
    items: list[ZendeskItem] = []
    for position, article in enumerate(data["articles"], 1):
        if not isinstance(article, dict) or article.get("id") in (None, ""):
            items.append(ZendeskItem(f"#{position}", {}, error="article without an id"))
            continue
        items.append(_item(article, segments, sections, section_category, categories))
    return items


def _item(
    article: Mapping[str, Any],
    segments: Mapping[str, str],
    sections: Mapping[str, str],
    section_category: Mapping[str, str],
    categories: Mapping[str, str],
) -> ZendeskItem:
    article_id = str(article["id"])
    locale = str(article.get("locale") or "en-us").lower()
    source = str(article.get("source_locale") or locale).lower()
    slug = f"zd-{article_id}" if locale == source else f"zd-{article_id}-{locale}"
    label = f"#{article_id}" + ("" if locale == source else f" ({locale})")
    segment = article.get("user_segment_id")
    if segment is None:
        audience = "all"
    elif str(segment) in segments:
        audience = segments[str(segment)]
    else:
        return ZendeskItem(
            label,
            {},
            error=f"user_segment_id {segment} is not in {SEGMENTS_FILE} (add "
            f"'{segment}: all|pro|enterprise' beside the export); an article is never shown to "
            "more customers than someone decided",
        )
    section_id = str(article.get("section_id") or "")
    section = sections.get(section_id, "")
    category = categories.get(section_category.get(section_id, ""), "")
    meta: dict[str, Any] = {
        "slug": slug,
        "title": article.get("title") or article.get("name") or "",
        "audience": audience,
        "status": "draft" if article.get("draft") is True else "published",
        "locale": locale.split("-", 1)[0],
        "category": section or category or "",
        "tags": [str(t) for t in article.get("label_names") or [] if str(t).strip()],
        "updatedAt": article.get("edited_at") or article.get("updated_at"),
    }
    body = article.get("body")
    return ZendeskItem(label, meta, html=body if isinstance(body, str) else "")
