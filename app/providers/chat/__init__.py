"""Chat models, chosen from settings by name; the offline one is also every turn's fallback."""

from __future__ import annotations

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
from app.providers.chat.offline import OfflineChatModel
from app.settings import Settings


def build_chat_model(settings: Settings) -> ChatModel:
    """The configured model (`LLM=offline|anthropic`); a missing key is a `ProviderConfigError`."""
    if settings.llm == "anthropic":
        from app.providers.chat.anthropic import AnthropicChatModel

        key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
        return AnthropicChatModel(
            key,
            model=settings.anthropic_model,
            timeout_seconds=settings.anthropic_timeout_seconds,
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
