"""What the configured language model costs, for the daily spend cap (`app.spend`).

Prices are settings, not a table of vendors' list prices: those change, and a self-hosted model
costs whatever its hardware does. When nobody set them (`LLM=openai` without
`OPENAI_PRICE_*`), tokens are still counted but cost 0, and /readyz and the admin metrics say
that the cap cannot engage.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.settings import Settings

# Anthropic bills cache reads at ~0.1x the input price and cache writes at ~1.25x.
CACHE_READ_PRICE = 0.1
CACHE_WRITE_PRICE = 1.25


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens of the configured model."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def describe(self) -> str:
        return (
            f"USD per million tokens: input {self.input:g}, output {self.output:g}, "
            f"cache read {self.cache_read:g}"
        )


def prices_for(settings: Settings) -> Prices | None:
    """The configured model's prices, or None when nobody said (LLM=openai without prices)."""
    if settings.llm == "openai":
        per_input = settings.openai_price_input_per_mtok_usd
        per_output = settings.openai_price_output_per_mtok_usd
        if per_input is None or per_output is None:
            return None
        cached = settings.openai_price_cached_input_per_mtok_usd
        return Prices(per_input, per_output, per_input if cached is None else cached, per_input)
    per_input = settings.llm_price_input_per_mtok_usd
    return Prices(
        per_input,
        settings.llm_price_output_per_mtok_usd,
        per_input * CACHE_READ_PRICE,
        per_input * CACHE_WRITE_PRICE,
    )


UNKNOWN_PRICE = (
    "unknown: tokens are counted but priced at 0, so the daily spend cap cannot engage; set "
    "OPENAI_PRICE_INPUT_PER_MTOK_USD and OPENAI_PRICE_OUTPUT_PER_MTOK_USD (0 for a self-hosted "
    "model)"
)


def pricing_note(settings: Settings) -> str:
    """What the spend cap knows about the model's price, for /readyz and the admin metrics."""
    prices = prices_for(settings)
    return UNKNOWN_PRICE if prices is None else prices.describe()
