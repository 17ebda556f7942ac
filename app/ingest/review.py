"""Review flags: content that needs a human look before it is trusted. Pure: no I/O.

Help articles are written by many people and sometimes pasted from elsewhere. Text that talks to
an AI assistant instead of to a customer is the classic shape of a prompt-injection attempt. A
flag does not block ingestion (the article may be legitimate, e.g. a security advisory quoting an
attack); it is stored on the article so retrieval and review tooling can act on it.
"""

from __future__ import annotations

import re

PROMPT_INJECTION = "possible-prompt-injection"

# Who an injection addresses. Bare "assistant", "bot" or "model" are left out on purpose: help
# text legitimately says "add someone as an assistant" or "choose a model".
_AI = (
    r"(?:a\.?i\.?(?:\s+(?:assistant|agent|model|system|chat ?bot))?|llm"
    r"|(?:large\s+)?language\s+model|chat ?bot)s?(?![\w-])"
)
_INJECTION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # "ignore all previous instructions", "disregard the above rules", "forget your guidelines"
        r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
        r"(?:previous|prior|above|earlier|preceding|original|former|system)\s+"
        r"(?:instructions?|prompts?|rules|guidelines|directions|directives|context)\b",
        r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+(?:of\s+)?)?your\s+"
        r"(?:instructions|rules|guidelines|programming|training|system\s+prompt)\b",
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+|every\s+|any\s+)?(?:of\s+)?(?:the\s+)?"
        r"(?:instructions?|rules)\s+(?:you\s+(?:were|have\s+been)\s+given|(?:given\s+)?above|so\s+far)",
        r"\bsystem\s+prompts?\b",
        # "you are now" alone is everyday help text ("you are now signed in", "you are now in kiosk
        # mode"); a change of identity or of the rules is not
        r"\byou\s+are\s+now\s+(?:an?\s+)?(?:unrestricted|jailbroken|free\s+of|no\s+longer\s+bound|"
        rf"dan\b|in\s+(?:developer|god|jailbreak|dan|unrestricted)\s+mode|{_AI})",
        r"\bnew\s+instructions?\s*:",
        # the reader addressed as an AI: "if you are an AI", "note to language models",
        # "AI assistants reading this page must ..."
        rf"\b(?:if\s+you\s+are|you\s+are|as)\s+an?\s+{_AI}",
        rf"\b(?:attention|note\s+to|notice\s+to|message\s+to|dear|hey|hello|to\s+all|to\s+any)"
        rf"[\s,:]+(?:the\s+)?(?:{_AI}|chatgpt|gpt-?\d\w*|claude|gemini)",
        rf"\b{_AI}\s+(?:reading\b|that\s+reads?\b|which\s+reads?\b|who\s+reads?\b|"
        r"processing\s+this|summari[sz]ing\s+this|answering\b|must\b|should\b|are\s+instructed\b)",
        # keeping things from the customer is never a help-article instruction
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this\s+|it\s+)?to|"
        r"reveal\s+(?:this\s+|it\s+)?to|disclose\s+(?:this\s+|it\s+)?to)\s+(?:the\s+|any\s+)?"
        r"(?:customers?|users?|callers?|clients?)\b",
        r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|repeat|acknowledge)\s+"
        r"(?:this|these)\s+(?:note|instructions?|messages?|lines?)\b",
        r"\b(?:reveal|print|repeat)\s+(?:me\s+)?your\s+(?:hidden\s+|initial\s+|original\s+)?"
        r"(?:prompt|instructions)\b",
        r"<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?INST\]|<<\s*SYS\s*>>",
    )
)
_MARKUP = re.compile(r"[*_`~]+")
_SPACE = re.compile(r"\s+")


def injection_phrases(text: str) -> list[str]:
    """The instruction-like phrases aimed at an AI assistant found in `text`, in order."""
    plain = _SPACE.sub(" ", _MARKUP.sub("", text))
    found: list[tuple[int, str]] = []
    for pattern in _INJECTION_PATTERNS:
        found.extend((m.start(), m.group(0).strip()) for m in pattern.finditer(plain))
    seen: set[str] = set()
    phrases: list[str] = []
    for _, phrase in sorted(found):
        if phrase.lower() not in seen:
            seen.add(phrase.lower())
            phrases.append(phrase)
    return phrases


def review_flags(title: str, body: str) -> list[str]:
    """Flags to store on an article; currently only `possible-prompt-injection`."""
    return [PROMPT_INJECTION] if injection_phrases(f"{title}\n{body}") else []
