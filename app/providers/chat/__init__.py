"""Chat models, chosen from settings by name; the offline one is also every turn's fallback."""

from __future__ import annotations

import dataclasses

from app.providers.budget import RetryPolicy
from app.providers.chat.base import (
    ChatMessage,
    ChatModel,
    GenerationReply,
    GenerationRequest,
    JsonReply,
    Passage,
    PassageLike,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolOutcome,
    ToolRunner,
    Usage,
)
from app.providers.chat.models import capabilities_for
from app.providers.chat.offline import OfflineChatModel
from app.providers.chat.pricing import pricing_note
from app.providers.errors import ProviderConfigError
from app.settings import Settings
from tuning import TUNING, Tuning


def build_chat_model(settings: Settings, tuning: Tuning = TUNING) -> ChatModel:
    """The configured model (`LLM=offline|anthropic|openai`); a missing key or an inconsistent
    setting is a `ProviderConfigError`.

    Build it once per process: the adapter holds the pooled HTTP client."""
    if problems := settings.llm_problems():
        raise ProviderConfigError("; ".join(problems))
    if settings.llm == "openai":
        from app.providers.chat.openai import OpenAIChatModel

        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        model = OpenAIChatModel(
            base_url=settings.openai_base_url.strip(),
            model=(settings.openai_model or "").strip(),
            api_key=key,
            timeout_seconds=settings.openai_timeout_seconds,
            retry=RetryPolicy.from_tuning(tuning),
            json_mode=settings.openai_json_mode,
        )
        model.health.facts["pricing"] = pricing_note(settings)
        return model
    if settings.llm == "anthropic":
        from app.providers.chat.anthropic import AnthropicChatModel

        key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
        caps = capabilities_for(settings.anthropic_model)
        if settings.anthropic_cache_min_tokens is not None:
            caps = dataclasses.replace(caps, cache_min_tokens=settings.anthropic_cache_min_tokens)
        return AnthropicChatModel(
            key,
            model=settings.anthropic_model,
            capabilities=caps,
            timeout_seconds=settings.anthropic_timeout_seconds,
            retry=RetryPolicy.from_tuning(tuning),
            thinking_budget_tokens=settings.anthropic_thinking_budget_tokens,
        )
    return OfflineChatModel()


def build_fallback_chat_model() -> ChatModel:
    """What a turn falls back to when the configured model fails (and past the spend cap)."""
    return OfflineChatModel()


__all__ = [
    "ChatMessage",
    "ChatModel",
    "GenerationReply",
    "GenerationRequest",
    "JsonReply",
    "OfflineChatModel",
    "Passage",
    "PassageLike",
    "StreamDone",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolOutcome",
    "ToolRunner",
    "Usage",
    "build_chat_model",
    "build_fallback_chat_model",
]
