"""What each Claude model accepts, declared as data; requests are built from these, not guessed.

Sources (checked 2026-11-30; cache minimums re-checked 2026-12-01): Anthropic's prompt-caching
("Cache limitations"), extended-thinking, structured-outputs and tool-use documentation, and the
model list of the pinned SDK (2.14.0). Haiku 5's minimum is not published: it is given its
predecessor's 4,096 until measured. Where sources disagree the conservative value is used and the
reason is noted: claiming caching that cannot engage is the failure this table exists to prevent.

- `cache_min_tokens`: below this many tokens in the cached prefix (tools + system), the API
  silently caches nothing and reports zero cache tokens. Anthropic's prompt-caching page
  (https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "Cache limitations", as
  quoted 2026 in e.g. github.com/affaan-m/ECC/pull/3173) lists: 512 for Opus 5, Fable 5 and
  Mythos 5; 1,024 for Opus 4.8, Sonnet 5, Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4 and Sonnet 4;
  2,048 for Opus 4.7 (and Mythos Preview) and Haiku 3.5; 4,096 for Opus 4.6, Opus 4.5 and
  Haiku 4.5. Exception: Sonnet 4.6 is used at **2,048**, because users reproduced that a
  ~1,024-token prefix is not cached on Sonnet 4.6 while the same call on Sonnet 4.5 is, and
  that caching starts at 2,048 (github.com/anthropics/anthropic-sdk-python/issues/1194, closed
  without a documentation change). `ANTHROPIC_CACHE_MIN_TOKENS` overrides the table.
- `forced_tool_choice`: `tool_choice: {"type": "tool"|"any"}` is accepted. With extended
  thinking on, *no* current model accepts it (only `auto`/`none`), so callers never combine a
  forced tool with thinking; see `json_mode`.
- `structured_output`: `output_config.format` (JSON schema) is accepted.
- `thinking`: extended thinking (`thinking: {"type": "enabled", "budget_tokens": N}`);
  `adaptive_thinking`: the model takes `{"type": "adaptive"}` instead (the 4.6 generation; the SDK
  warns that `enabled` is deprecated for Opus 4.6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

JsonMode = Literal["forced_tool", "output_format", "auto_tool"]
MIN_THINKING_BUDGET = 1024  # the API's minimum `budget_tokens`


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    thinking: bool
    forced_tool_choice: bool
    structured_output: bool
    cache_min_tokens: int
    adaptive_thinking: bool = False


# Longest matching prefix wins (so "claude-sonnet-4-5" beats "claude-sonnet-4").
_TABLE: dict[str, ModelCapabilities] = {
    "claude-opus-5": ModelCapabilities(True, True, True, 512, adaptive_thinking=True),
    "claude-fable-5": ModelCapabilities(True, True, True, 512, adaptive_thinking=True),
    "claude-mythos-5": ModelCapabilities(True, True, True, 512, adaptive_thinking=True),
    "claude-sonnet-5": ModelCapabilities(True, True, True, 1024, adaptive_thinking=True),
    "claude-haiku-5": ModelCapabilities(True, True, True, 4096, adaptive_thinking=True),
    "claude-opus-4-8": ModelCapabilities(True, True, True, 1024, adaptive_thinking=True),
    "claude-opus-4-7": ModelCapabilities(True, True, True, 2048, adaptive_thinking=True),
    "claude-opus-4-6": ModelCapabilities(True, True, True, 4096, adaptive_thinking=True),
    "claude-opus-4-5": ModelCapabilities(True, True, True, 4096),
    "claude-opus-4-1": ModelCapabilities(True, True, True, 1024),
    "claude-opus-4": ModelCapabilities(True, True, False, 1024),
    "claude-sonnet-4-6": ModelCapabilities(True, True, True, 2048, adaptive_thinking=True),
    "claude-sonnet-4-5": ModelCapabilities(True, True, True, 1024),
    "claude-sonnet-4": ModelCapabilities(True, True, False, 1024),
    "claude-haiku-4-5": ModelCapabilities(True, True, True, 4096),
    "claude-3-7-sonnet": ModelCapabilities(True, True, False, 1024),
    "claude-3-5-haiku": ModelCapabilities(False, True, False, 2048),
    "claude-3-haiku": ModelCapabilities(False, True, False, 2048),
}
# An unknown model: no thinking, no structured output, and a minimum no prefix of ours reaches,
# so nothing is claimed about caching until someone adds the model here.
UNKNOWN = ModelCapabilities(False, True, False, 4096)


def capabilities_for(model: str) -> ModelCapabilities:
    best = ""
    for prefix in _TABLE:
        if model.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return _TABLE[best] if best else UNKNOWN


def json_mode(caps: ModelCapabilities, *, thinking: bool) -> JsonMode:
    """How to get one JSON object from this model: a forced tool when allowed (it accepts the
    condenser's full schema), else the structured-output format, else an offered tool."""
    if caps.forced_tool_choice and not thinking:
        return "forced_tool"
    if caps.structured_output:
        return "output_format"
    return "auto_tool"


def estimate_tokens(chars: int) -> int:
    """A *low* token estimate for English prompt text: 4 characters per token.

    Claude's tokenizer gives roughly 3.5 characters per token on English prose and fewer on JSON,
    so this undercounts; used only to decide whether a prefix may reach the cache minimum (an
    undercount can withhold a cache breakpoint, never claim one that cannot engage). When the
    token-counting endpoint has measured a prefix, the measurement is used instead.
    """
    return chars // 4


def thinking_param(caps: ModelCapabilities, budget_tokens: int) -> dict[str, object] | None:
    """The request's `thinking` value, or None when thinking is off or the model has none."""
    if budget_tokens <= 0 or not caps.thinking:
        return None
    if caps.adaptive_thinking:
        return {"type": "adaptive"}
    return {"type": "enabled", "budget_tokens": max(MIN_THINKING_BUDGET, budget_tokens)}
