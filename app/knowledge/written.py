"""Knowledge from a case is written, not copied (pure: no I/O).

What one customer wrote must never reach another customer as they wrote it. Before a problem
statement, a resolution or a customer's question becomes published knowledge (a resolution
ticket, a draft article), `written_problem` / `written_resolution` rewrite it:

- normalised (`app.language.normalize`): look-alike, full-width, hidden and spaced letters
  read plainly, so nothing below can be dodged by spelling;
- the customer's links are never published: a clause holding a link, a secret (password, code,
  "what they type to sign in") or an instruction (`app.safety.screen`) is dropped from a
  problem statement, which states the problem, not what to do about it;
- personal data masked (`app.safety.pii`: cards, emails, phones, IBANs, passwords);
- names of people and organisations removed: the customer's own stored name (a company on this
  product) and its distinctive words, a self-introduction ("this is Ana Ruiz from Contoso
  Building 4", "my name is…", "ich bin…", "je suis…"), a sign-off ("Thanks, Ana"), a greeting
  that names someone ("Hi Ana,"), and any run of two or more capitalised words inside a sentence
  that is not the tenant's own vocabulary (products, plans, platforms: `keep`).

What it does not remove: a single capitalised word that is not known to be a name ("ask Ana"),
and a name spelled in lower case. That is why the agent sees the exact text before publishing
(and can edit it), and why every published text also passes the screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from app.language.normalize import normalize
from app.safety.pii import KINDS, mask_text
from app.safety.screen import instructs, sentences

NAME_MARK = "[name]"
LINK_MARK = "[link]"

_LINK = re.compile(r"(?i)\b(?:https?://|www\.)\S+|\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}/\S*")
_CAP = r"[A-ZÄÖÜÉÈÀÂÇÎÔÛ][\w'&-]*"
_CAPS = rf"{_CAP}(?:[ \t]+(?:&[ \t]+)?{_CAP}){{0,3}}"
# where in an organisation: "Building 4", "Floor 3", "Gebäude B", or a bare number after the name
_PLACE = (
    r"(?:[ \t,]+(?:(?i:building|bldg\.?|floor|office|site|campus|suite|gebäude|bâtiment)[ \t]+)?"
    r"\d[\w-]*)?"
)
_INTRO = re.compile(
    r"(?i:\b(?:hi|hello|hey|hallo|bonjour)\b[,!]?\s*)?"
    r"(?i:\b(?:this\s+is|my\s+name\s+is|my\s+name's|i\s+am|i'm|it's|ich\s+bin|hier\s+(?:ist|spricht)"
    r"|mein\s+name\s+ist|je\s+suis|je\s+m'appelle|c'est)\s+)"
    rf"(?P<name>{_CAPS}){_PLACE}"
    rf"(?:[ \t]+(?i:from|at|of|with|von|bei|de|chez)[ \t]+(?P<org>{_CAPS}){_PLACE})?"
    r"[\s,.:;!-]*"
)
_GREETING = re.compile(
    r"(?i:\b(?:hi|hello|hey|dear|hallo|bonjour)\s+)(?P<name>" + _CAPS + r")\s*[,!:]"
)
_SIGN_OFF = re.compile(
    r"(?i:\b(?:thanks|thank\s+you|thx|cheers|regards|best|kind\s+regards|danke|grüße|merci|"
    r"cordialement)[,!.]?\s+)(?P<name>" + _CAPS + r")\s*[.!]?\s*$"
)
_SPAN = re.compile(rf"(?<=[\w,;:)] ){_CAP}(?:[ \t]+(?:&[ \t]+)?{_CAP})+")
_SECRETISH = re.compile(
    r"(?i)\b(?:pass(?:word|code|phrase)s?|pins?|credentials?|secrets?|one-time\s+codes?|"
    r"log\s*in\s+there|sign\s*in\s+there|verification\s+codes?)\b"
)
_CLAUSE = re.compile(r"\s*[:;]\s+|\s+[-–—]\s+")
_SPACES = re.compile(r"[ \t]+")
_EMPTY_PUNCT = re.compile(r"\s+([,.;:!?])|([,;:])\s*(?=[,.;:!?]|$)")


def known_names(customer: Mapping[str, Any] | None) -> list[str]:
    """The customer's stored name and its distinctive words (a company: "Lumen Dental Studio"
    gives itself, "Lumen", "Dental", "Studio"), longest first."""
    name = str((customer or {}).get("name") or "").strip()
    if not name:
        return []
    words = [w for w in re.findall(r"[^\W\d_][\w'-]{2,}", name)]
    return sorted({name, *words}, key=len, reverse=True)


def _drop_known(text: str, names: Iterable[str]) -> str:
    for name in names:
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", NAME_MARK, text, flags=re.IGNORECASE)
    return text


def without_names(
    text: str, names: Iterable[str] = (), keep: Callable[[str], bool] = lambda _: False
) -> str:
    """`text` with people's and organisations' names removed (see the module doc)."""

    def intro(m: re.Match[str]) -> str:
        return m.group(0) if keep(m.group("name")) else ""

    def named(m: re.Match[str]) -> str:
        return m.group(0) if keep(m.group("name")) else m.group(0).replace(m.group("name"), "")

    def span(m: re.Match[str]) -> str:
        return m.group(0) if keep(m.group(0)) else NAME_MARK

    text = _INTRO.sub(intro, text)
    text = _GREETING.sub(named, text)
    text = _SIGN_OFF.sub(intro, text)
    text = _drop_known(text, names)
    text = _SPAN.sub(span, text)
    return tidy(text)


def tidy(text: str) -> str:
    """Whitespace and punctuation left behind by removals cleaned up."""
    lines = [_EMPTY_PUNCT.sub(lambda m: m.group(1) or "", _SPACES.sub(" ", ln)).strip(" ,;:-")
             for ln in text.splitlines()]  # fmt: skip
    return "\n".join(lines).strip()


def _stated(clause: str) -> bool:
    """A clause that states the problem: no link, no secret, no instruction."""
    return not (_LINK.search(clause) or _SECRETISH.search(clause) or instructs(clause))


def problem_clauses(text: str) -> list[str]:
    """The clauses of the customer's text that state a problem (see `_stated`)."""
    kept: list[str] = []
    for sentence in sentences(text):
        parts = [p for p in _CLAUSE.split(sentence) if p.strip()]
        good = [p for p in parts if _stated(p)]
        if good:
            kept.append(": ".join(p.strip() for p in good))
    return kept


def written_problem(
    text: str,
    *,
    names: Iterable[str] = (),
    keep: Callable[[str], bool] = lambda _: False,
    pii: tuple[str, ...] = KINDS,
) -> str:
    """The publishable problem statement written from a customer's (condensed) words."""
    plain = normalize(text)
    stated = " ".join(problem_clauses(plain))
    return tidy(without_names(mask_text(stated, pii), names, keep))


def written_resolution(
    text: str,
    *,
    names: Iterable[str] = (),
    keep: Callable[[str], bool] = lambda _: False,
    pii: tuple[str, ...] = KINDS,
) -> str:
    """An agent's resolution as published: normalised, PII masked, names removed. Its links
    stay (an agent may point to a help page); its instructions are for the screen to flag."""
    return without_names(mask_text(normalize(text).strip(), pii), names, keep)
