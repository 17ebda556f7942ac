"""Reranker adapters: offline default, cross-encoder (tiny random BERT); Voyage: test_voyage.py."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from app.language.text import content_terms
from app.providers.embeddings.fake import FakeEmbedder
from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.rerank import FakeReranker, OfflineReranker, Reranker, build_reranker
from app.providers.rerank.cross_encoder import CrossEncoderReranker, sigmoid
from app.providers.rerank.offline import Features, OfflineWeights, blend, lexical_features
from app.providers.rerank.voyage import VoyageReranker
from app.settings import Settings

SSO_302 = "SAML signature errors › Error AUTH_302\nAUTH_302 means the signature did not verify."
SSO_304 = "SAML clock skew › Error AUTH_304\nAUTH_304 means the clock drifted."
PASSWORD = "Resetting your password › Steps\nSelect Forgot password and follow the reset link."


# --- offline ---------------------------------------------------------------------------------


async def test_offline_scores_are_in_unit_interval_and_in_input_order() -> None:
    r = OfflineReranker(FakeEmbedder())
    scores = await r.rerank("how do I reset my password", [SSO_302, PASSWORD, SSO_304])
    assert len(scores) == 3
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[1] == max(scores)


async def test_offline_exact_error_code_beats_its_neighbour_code() -> None:
    r = OfflineReranker(FakeEmbedder())
    s302, s304 = await r.rerank("getting AUTH_302 when signing in", [SSO_302, SSO_304])
    assert s302 > s304
    feats = await r.features("getting AUTH_302 when signing in", [SSO_302, SSO_304])
    assert (feats[0].code_hit, feats[0].code_miss) == (1.0, 0.0)
    assert (feats[1].code_hit, feats[1].code_miss) == (0.0, 1.0)


async def test_offline_code_written_differently_still_matches() -> None:
    cov, _, hit, miss = lexical_features(content_terms("auth-302 certificate"), SSO_302)
    assert (hit, miss) == (1.0, 0.0)
    assert cov == pytest.approx(1.0 - 1.0 / 3.0)  # auth302 (weight 2) present, "certificat" absent


def test_lexical_features_title_and_coverage() -> None:
    cov, title, hit, miss = lexical_features(content_terms("reset password"), PASSWORD)
    assert (cov, title, hit, miss) == (1.0, 1.0, 0.0, 0.0)
    assert lexical_features([], PASSWORD) == (0.0, 0.0, 0.0, 0.0)


def test_blend_is_monotone_in_every_feature_and_centred() -> None:
    w = OfflineWeights()
    mid = Features(sem=w.sem_center, coverage=w.coverage_center, title=0, code_hit=0, code_miss=0)
    assert blend(mid, w) == pytest.approx(0.5)
    for change in ({"sem": 0.9}, {"coverage": 1.0}, {"title": 1.0}, {"code_hit": 1.0}):
        assert blend(dataclasses.replace(mid, **change), w) > 0.5, change
    assert blend(dataclasses.replace(mid, code_miss=1.0), w) < 0.5
    extreme = Features(sem=-1.0, coverage=0.0, title=0.0, code_hit=0.0, code_miss=1.0)
    assert 0.0 <= blend(extreme, w) < 0.01


# Made-up passages: one states a price; the others, like most help text, state durations.
PRICED = "Plans › Prices\nThe Team plan is $12 per seat."
TIMED = [
    "Plans › Trials\nA trial lasts 14 days.",
    "Plans › Upgrades\nAn upgrade takes effect within 5 minutes.",
    "Plans › Renewals\nRenewal notices go out 30 days ahead.",
]


async def test_an_answer_type_counts_by_how_rare_it_is_among_the_candidates() -> None:
    r = OfflineReranker(None)
    texts = [PRICED, *TIMED]
    # the only passage with a price gets the whole bonus for "how much"
    price = await r.features("how much is the team plan", texts)
    assert [f.answer_type for f in price] == [1.0, 0.0, 0.0, 0.0]
    # a duration that every passage but the priced one shows says little about which answers
    took = await r.features("how long does an upgrade take", texts)
    assert [f.answer_type for f in took] == [0.0, pytest.approx(1 / 3)] + [pytest.approx(1 / 3)] * 2
    # alone, a passage keeps the whole bonus; with rarity 0 the bonus is flat, as before
    assert (await r.features("how long does an upgrade take", TIMED[:1]))[0].answer_type == 1.0
    flat = OfflineReranker(None, dataclasses.replace(OfflineWeights(), answer_type_rarity=0.0))
    assert [f.answer_type for f in await flat.features("how long", texts)] == [0.0, 1.0, 1.0, 1.0]
    scores = await r.rerank("how much is the team plan", texts)
    assert scores[0] == max(scores)


async def test_offline_without_embedder_uses_words_only() -> None:
    r = OfflineReranker(None)
    scores = await r.rerank("reset password", [PASSWORD, SSO_302])
    assert scores[0] > scores[1]


async def test_offline_caches_passage_vectors() -> None:
    embedder = FakeEmbedder()
    r = OfflineReranker(embedder)
    await r.rerank("q one", [PASSWORD, SSO_302])
    await r.rerank("q two", [PASSWORD, SSO_302, SSO_304])
    embedded = [t for call in embedder.calls for t in call]
    assert embedded.count(PASSWORD) == 1 and embedded.count(SSO_304) == 1


async def test_offline_cache_is_bounded() -> None:
    r = OfflineReranker(FakeEmbedder(), cache_size=2)
    await r.rerank("q", ["a\nx", "b\ny", "c\nz"])
    assert len(r._cache) == 2


async def test_offline_embedding_failure_is_a_provider_error() -> None:
    embedder = FakeEmbedder()
    embedder.fail_with = RuntimeError("model file missing")
    with pytest.raises(ProviderError, match="model file missing"):
        await OfflineReranker(embedder).rerank("q", [PASSWORD])


async def test_offline_empty_texts() -> None:
    assert await OfflineReranker(FakeEmbedder()).rerank("q", []) == []


# --- fake ------------------------------------------------------------------------------------


async def test_fake_reranker_scripted_and_overlap_modes() -> None:
    scripted = FakeReranker({"AUTH_302": 0.9, "password": 0.4}, default=0.1)
    assert await scripted.rerank("q", [SSO_302, PASSWORD, SSO_304]) == [0.9, 0.4, 0.1]
    assert scripted.calls == [("q", [SSO_302, PASSWORD, SSO_304])]
    overlap = FakeReranker()
    assert await overlap.rerank("reset password", [PASSWORD, SSO_302]) == [1.0, 0.0]
    assert isinstance(overlap, Reranker)


# --- voyage: tests/test_voyage.py (against a fake Voyage HTTP server) ----------------------


# --- cross-encoder -------------------------------------------------------------------------


def _tiny_bert(path: Path, bias: float | None = None) -> Path:
    """A randomly initialised 1-layer BERT cross-encoder saved locally: no download."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "reset", "password", "auth", "302"]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
    )
    model = BertForSequenceClassification(config)
    if bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.fill_(bias)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.mark.slow
async def test_cross_encoder_scores_a_tiny_random_bert(tiny_bert: Path) -> None:
    r = CrossEncoderReranker(str(tiny_bert), max_length=64)
    texts = ["reset password", "auth 302", "unknown words entirely"]
    scores = await r.rerank("reset my password", texts)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    assert await r.rerank("reset my password", texts) == scores  # deterministic (eval mode)
    assert await r.rerank("q", []) == []


@pytest.mark.slow
@pytest.mark.parametrize("logit", [2.0, -3.0])
async def test_cross_encoder_applies_sigmoid_to_raw_logits(tmp_path: Path, logit: float) -> None:
    r = CrossEncoderReranker(str(_tiny_bert(tmp_path, bias=logit)), max_length=64)
    scores = await r.rerank("reset", ["password", "auth 302"])
    assert scores == pytest.approx([1 / (1 + math.exp(-logit))] * 2, abs=1e-5)


@pytest.mark.slow  # imports sentence-transformers (torch): seconds
async def test_cross_encoder_missing_model_is_a_config_error(tmp_path: Path) -> None:
    r = CrossEncoderReranker(str(tmp_path / "does-not-exist"))
    with pytest.raises(ProviderConfigError):
        await r.rerank("q", ["a"])


def test_sigmoid_is_stable() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(1000.0) == 1.0
    assert sigmoid(-1000.0) == 0.0
    assert sigmoid(2.0) == pytest.approx(1 / (1 + math.exp(-2.0)))


# --- factory ---------------------------------------------------------------------------------


def _settings(**kw: Any) -> Settings:
    return Settings(_env_file=None, **kw)  # type: ignore[call-arg]


def test_build_reranker_by_name() -> None:
    embedder = FakeEmbedder()
    assert isinstance(build_reranker(_settings(), embedder), OfflineReranker)
    ce = build_reranker(_settings(reranker="cross-encoder", cross_encoder_model="m/x"), embedder)
    assert isinstance(ce, CrossEncoderReranker) and ce.model_name == "m/x"
    with pytest.raises(ProviderConfigError):
        build_reranker(_settings(reranker="voyage"), embedder)
    voyage = build_reranker(_settings(reranker="voyage", voyage_api_key="k"), embedder)
    assert isinstance(voyage, VoyageReranker) and voyage.model == "rerank-2.5-lite"
    for r in (ce, voyage):
        assert isinstance(r, Reranker)


async def test_offline_reuses_stored_passage_vectors() -> None:
    embedder = FakeEmbedder()
    r = OfflineReranker(embedder)
    stored = await FakeEmbedder().embed_documents([PASSWORD, SSO_302])
    by_text = await r.rerank("reset my password", [PASSWORD, SSO_302])
    embedder.calls.clear()
    by_vector = await r.rerank_with_vectors("reset my password", [PASSWORD, SSO_302], stored)
    assert embedder.calls == [["reset my password"]]  # only the question was embedded
    assert by_vector == pytest.approx(by_text)


async def test_offline_embeds_passages_whose_stored_vector_is_missing_or_foreign() -> None:
    embedder = FakeEmbedder()
    r = OfflineReranker(embedder)
    await r.rerank_with_vectors("q", [PASSWORD, SSO_302, SSO_304], [None, [1.0, 0.0], None])
    assert embedder.calls[1] == [PASSWORD, SSO_302, SSO_304]
    with pytest.raises(ValueError):
        await r.rerank_with_vectors("q", [PASSWORD], [])


def test_offline_is_a_vector_reranker_and_others_are_not() -> None:
    from app.providers.rerank.base import VectorReranker

    assert isinstance(OfflineReranker(None), VectorReranker)
    assert not isinstance(FakeReranker(), VectorReranker)
    voyage = build_reranker(_settings(reranker="voyage", voyage_api_key="k"), None)
    assert not isinstance(voyage, VectorReranker)


SPECS = (
    "Hardware specifications › Devices\n"
    "Every device is listed below with its dimensions, weight and power draw.\n\n"
    "| | Room Panel | Desk Tag |\n|---|---|---|\n"
    "| Weight | 780 g | 45 g |\n| Price | $349 | $39 |\n| Display | 10-inch | e-paper |"
)


async def test_a_table_is_also_read_row_by_row() -> None:
    query = "price desk tag"
    on = await OfflineReranker(FakeEmbedder()).features(query, [SPECS, PASSWORD])
    off_weights = dataclasses.replace(OfflineWeights(), table_rows=False)
    off = await OfflineReranker(FakeEmbedder(), off_weights).features(query, [SPECS, PASSWORD])
    embedder = FakeEmbedder()
    q = await embedder.embed_query(query)
    rows = await embedder.embed_documents(
        [
            f"Hardware specifications › Devices › {r}"
            for r in (
                "Weight — Room Panel: 780 g; Desk Tag: 45 g.",
                "Price — Room Panel: $349; Desk Tag: $39.",
                "Display — Room Panel: 10-inch; Desk Tag: e-paper.",
            )
        ]
    )
    best_row = max(sum(a * b for a, b in zip(q, r, strict=True)) for r in rows)
    assert on[0].sem == pytest.approx(max(off[0].sem, best_row))
    assert on[0].sem > off[0].sem  # the price row says more about the price than the whole page
    assert on[1].sem == off[1].sem  # a passage without a table is read as before


FOLLOW_UP = "and on the phone?\nHow do I reset my password on the phone app?"


async def test_a_follow_up_is_read_line_by_line_each_line_with_an_equal_say() -> None:
    """The message and its standalone question (`rerank_query`'s two lines) are embedded each
    on its own and `sem` is the mean of their cosines, not the cosine of one vector of both."""
    embedder = FakeEmbedder()
    per_line = await OfflineReranker(embedder).features(FOLLOW_UP, [PASSWORD, SSO_302])
    whole_weights = dataclasses.replace(OfflineWeights(), sem_per_line=False)
    whole = await OfflineReranker(FakeEmbedder(), whole_weights).features(
        FOLLOW_UP, [PASSWORD, SSO_302]
    )
    assert embedder.calls[:2] == [[line] for line in FOLLOW_UP.split("\n")]
    lines = [await embedder.embed_query(line) for line in FOLLOW_UP.split("\n")]
    passages = await embedder.embed_documents([PASSWORD, SSO_302])
    for i, p in enumerate(passages):
        cosines = [sum(a * b for a, b in zip(q, p, strict=True)) for q in lines]
        assert per_line[i].sem == pytest.approx(sum(cosines) / 2)
        assert per_line[i].sem != pytest.approx(whole[i].sem)
        # the lexical features read both lines' terms together, as before
        assert per_line[i].coverage == whole[i].coverage
    one_line = "how do I reset my password"
    assert await OfflineReranker(FakeEmbedder()).features(one_line, [PASSWORD]) == (
        await OfflineReranker(FakeEmbedder(), whole_weights).features(one_line, [PASSWORD])
    )


async def test_the_offline_reranker_matches_german_words_after_german_stemming() -> None:
    """ "Wo finde ich meine Rechnung?" covers "Rechnungen finden" once both sides are stemmed
    as German; the English suffix rules kept "rechnung" and "rechnungen" apart."""
    from app.providers.rerank.offline import OfflineReranker

    reranker = OfflineReranker(None)  # the lexical features alone
    found, other = await reranker.features(
        "Wo finde ich meine Rechnung?",
        [
            "Rechnungen finden\nÖffnen Sie Abrechnung → Rechnungen.",
            "Firmendaten\nDer Name steht oben.",
        ],
    )
    assert found.coverage == 1.0 and found.title == 1.0
    assert other.coverage == 0.0
