"""Deployment settings: where things live and which providers to use. Numbers live in tuning.py."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    """Built once in the app factory (or by a test) and passed down; never a module global."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    mongodb_uri: str | None = Field(
        default=None, description="Unset = embedded in-process store (mongomock-ng)."
    )
    mongodb_db: str = "concierge"
    embedded_store: Literal["file", "memory"] = Field(
        default="file",
        description="Embedded mode only. file = durable: written through to SQLite in DATA_DIR "
        "and owned by one process (locked); memory = gone on exit (tests, throwaway demos).",
    )
    data_dir: Path = Field(
        default=ROOT / "data",
        description="Embedded file store: its SQLite file and lock. One process per directory.",
    )

    embedder: Literal["local", "voyage", "fake"] = "local"
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
    anthropic_timeout_seconds: float = Field(
        default=30.0, description="Cap on one HTTP call; turn stages have budgets in tuning.py."
    )
    anthropic_cache_min_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Override the model's minimum cacheable prefix from app/providers/chat/"
        "models.py (e.g. once Anthropic confirms it); check the admin metrics' cache alert after.",
    )
    anthropic_thinking_budget_tokens: int = Field(
        default=0,
        ge=0,
        description="Extended thinking for answers (0 = off; at least 1024 when on). Used only "
        "by models that support it; never for the JSON condensation call.",
    )
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

    demo: bool = Field(
        default=False,
        description="DEMO=1 (set by `make run`): the /demo console and its identity-token "
        "minting exist, for loopback clients only, and the published dev secrets are accepted.",
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
    articles_dir: Path | None = Field(
        default=None,
        description="Serve this folder of docs (Markdown, MDX, HTML; recursively) instead of the "
        "demo company: articles only, no customers, orders, subscriptions or tickets.",
    )
    default_audience: Literal["all", "pro", "enterprise"] | None = Field(
        default=None,
        description="Audience for articles whose front matter names none. Unset: such files are "
        "rejected (entitlement fails closed), except under ARTICLES_DIR, which publishes to all.",
    )
    ttl_sweep_seconds: float = 60.0
    log_level: str = "INFO"

    @property
    def embedded(self) -> bool:
        return not self.mongodb_uri

    @model_validator(mode="after")
    def _docs_folder_has_its_own_store(self) -> Settings:
        """ARTICLES_DIR keeps its durable store in DATA_DIR/docs-<folder>-<hash>, so a docs folder
        never mixes with the demo company's data or with another folder's."""
        if self.articles_dir is not None and not self.data_dir.name.startswith("docs-"):
            folder = self.articles_dir.expanduser().resolve()
            name = re.sub(r"[^a-z0-9]+", "-", folder.name.lower()).strip("-") or "docs"
            digest = hashlib.sha256(str(folder).encode()).hexdigest()[:8]
            self.data_dir = self.data_dir / f"docs-{name}-{digest}"
        return self

    @property
    def docs_only(self) -> bool:
        """Serving a folder of docs: no customer data exists, so no order/subscription tools."""
        return self.articles_dir is not None

    @property
    def audience_default(self) -> str | None:
        """DEFAULT_AUDIENCE, else `all` for an ARTICLES_DIR folder (pointing the server at a
        folder of docs publishes it to its visitors), else None: files must say."""
        if self.default_audience is not None:
            return self.default_audience
        return "all" if self.articles_dir is not None else None

    @property
    def embedding_dimensions(self) -> int:
        """Width of the active embedder's vectors; the vector index definitions must match."""
        if self.embedder == "voyage":
            return self.voyage_embedding_dimensions
        return 384
