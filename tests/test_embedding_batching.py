"""Query micro-batching: concurrent turns share one model call, and get the same vectors."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from app.providers.embeddings.batching import QueryBatcher
from app.providers.embeddings.fake import FakeEmbedder


class RecordingEncoder:
    """Encodes with the fake embedder and records every batch it was given."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail
        self._fake = FakeEmbedder()

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        await asyncio.sleep(0.01)  # a model call takes a while; more queries arrive meanwhile
        if self.fail:
            raise RuntimeError("model crashed")
        return await self._fake.embed_documents(texts)


async def test_concurrent_queries_share_one_call_and_get_their_own_vector() -> None:
    enc = RecordingEncoder()
    batcher = QueryBatcher(enc, window_s=0.005)
    texts = [f"question {i}" for i in range(8)] + ["question 3"]  # one repeated
    vectors = await asyncio.gather(*(batcher.embed(t) for t in texts))
    assert len(enc.calls) == 1 and sorted(enc.calls[0]) == sorted(set(texts))  # deduplicated
    expected = await FakeEmbedder().embed_documents(texts)
    assert vectors == expected
    assert (batcher.batches, batcher.queries) == (1, 9)


async def test_queries_arriving_during_an_encode_form_the_next_batch() -> None:
    enc = RecordingEncoder()
    batcher = QueryBatcher(enc, window_s=0.0)
    first = asyncio.create_task(batcher.embed("a"))
    await asyncio.sleep(0.002)  # "a" is being encoded now
    rest = await asyncio.gather(*(batcher.embed(t) for t in ("b", "c", "d")))
    await first
    assert enc.calls == [["a"], ["b", "c", "d"]]
    assert len(rest) == 3


async def test_a_failed_batch_fails_each_waiting_query_and_the_next_one_works() -> None:
    enc = RecordingEncoder(fail=True)
    batcher = QueryBatcher(enc, window_s=0.001)
    results = await asyncio.gather(*(batcher.embed(t) for t in "xyz"), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    enc.fail = False
    assert await batcher.embed("x") == (await FakeEmbedder().embed_documents(["x"]))[0]


@pytest.mark.slow
async def test_minilm_batched_vectors_and_rankings_match_unbatched() -> None:
    from app.providers.embeddings.local_minilm import MiniLMEmbedder

    questions = [
        "How do I reset my password?",
        "The room panel LED is blinking amber",
        "Where do I add our VAT number on invoices?",
        "How long does shipping take?",
        "Can I pay by bank transfer?",
        "How do I pair a desk tag?",
    ]
    passages = [
        "To reset a password, open the sign-in page and choose Forgot password.",
        "An amber LED means the panel cannot reach the booking service.",
        "Owners add a VAT number under Billing and company details.",
        "Hardware ships within two business days; delivery takes three to five days.",
        "We accept cards and, on annual plans, bank transfers.",
        "Hold the tag's button for three seconds to pair it with the gateway.",
    ]
    embedder = MiniLMEmbedder(query_window_s=0.005)
    one_by_one = [await embedder.embed_query(q) for q in questions]
    batches_before = embedder.query_batches[0]
    together = await asyncio.gather(*(embedder.embed_query(q) for q in questions))
    assert embedder.query_batches[0] - batches_before < len(questions)  # really batched
    np.testing.assert_allclose(np.array(together), np.array(one_by_one), atol=1e-5)
    docs = np.array(await embedder.embed_documents(passages))
    rank_a = np.argsort(-np.array(one_by_one) @ docs.T, axis=1)
    rank_b = np.argsort(-np.array(together) @ docs.T, axis=1)
    assert (rank_a == rank_b).all()  # the same passages in the same order: the same answers
