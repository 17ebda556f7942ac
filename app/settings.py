"""Deployment settings: where things live and which providers to use. Numbers live in tuning.py."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    """Built once in the app factory (or by a test) and passed down; never a module global."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    mongodb_uri: str | None = Field(
        default=None, description="Unset = embedded in-process store (mongomock-ng)."
    )
    mongodb_db: str = "concierge"

    embedder: Literal["local", "voyage", "fake"] = "local"
    local_embedding_model: str = "all-MiniLM-L6-v2"
    voyage_api_key: SecretStr | None = None
    voyage_base_url: str | None = None
    voyage_embedding_model: str = "voyage-3.5"
    voyage_embedding_dimensions: int = 1024

    reranker: Literal["offline", "cross-encoder", "voyage"] = "offline"
    cross_encoder_model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2"
    voyage_rerank_model: str = "rerank-2.5-lite"

    llm: Literal["offline", "anthropic"] = "offline"
    anthropic_api_key: SecretStr | None = None
    anthropic_model: str = "claude-sonnet-4-6"
    anthropic_timeout_seconds: float = 30.0
    llm_price_input_per_mtok_usd: float = 3.0
    llm_price_output_per_mtok_usd: float = 15.0

    identity_secret: SecretStr = SecretStr("dev-identity-secret-change-me-32bytes!")
    session_secret: SecretStr = SecretStr("dev-session-secret-change-me-32bytes!!")
    admin_token: SecretStr = SecretStr("dev-admin-token")
    identity_keys: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Extra identity-token secrets by JWT `kid` (key rotation); a token without "
        '`kid` is checked against IDENTITY_SECRET. JSON, e.g. {"2026-11": "..."}.',
    )
    identity_issuer: str | None = Field(
        default=None, description="When set, identity tokens must carry this `iss`."
    )
    identity_audience: str | None = Field(
        default=None, description="When set, identity tokens must carry this `aud`."
    )

    cors_origins: list[str] = Field(
        default=["*"],
        description="Sites allowed to embed the widget. Auth is a bearer header, not a cookie, "
        "so '*' exposes nothing; list your domains in production anyway.",
    )

    embedding_cache_dir: Path | None = Field(
        default=ROOT / ".cache",
        description="Where document embeddings are cached between runs (unset to disable).",
    )
    seed_on_start: bool = True
    seed_dir: Path = ROOT / "seed"
    ttl_sweep_seconds: float = 60.0
    log_level: str = "INFO"

    @property
    def embedded(self) -> bool:
        return not self.mongodb_uri

    @property
    def embedding_dimensions(self) -> int:
        """Width of the active embedder's vectors; the vector index definitions must match."""
        if self.embedder == "voyage":
            return self.voyage_embedding_dimensions
        return 384
