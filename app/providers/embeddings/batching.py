"""Micro-batching of query embeddings across concurrent turns.

A CPU model encodes eight sentences in one forward pass for far less than eight passes of one,
so concurrent turns should not each run the model alone. `QueryBatcher.embed` queues the text
and one worker task per event loop collects whatever arrived within a short window (and
whatever arrives while the previous batch is still encoding), encodes the distinct texts in one
call, and hands every caller its own vector. With one client nothing waits longer than the
window; under load batches grow by themselves.

Vectors are the same as unbatched ones up to float rounding (sentence-transformers pads the
batch but masks the padding): tested in `tests/test_embedding_batching.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

EncodeMany = Callable[[list[str]], Awaitable[list[list[float]]]]


class QueryBatcher:
    def __init__(self, encode_many: EncodeMany, window_s: float = 0.002, max_batch: int = 32):
        self._encode_many = encode_many
        self.window_s = window_s
        self.max_batch = max_batch
        self._pending: list[tuple[str, asyncio.Future[list[float]]]] = []
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.batches = 0  # how many model calls served how many queries (for the benchmark)
        self.queries = 0

    async def embed(self, text: str) -> list[float]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[float]] = loop.create_future()
        if self._loop is not loop:  # a new event loop (tests, scripts): start over on it
            self._loop, self._worker, self._pending = loop, None, []
        self._pending.append((text, future))
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._run())
        return await future

    async def _run(self) -> None:
        while self._pending:
            await asyncio.sleep(self.window_s)  # the collection window
            batch = self._pending[: self.max_batch]
            self._pending = self._pending[self.max_batch :]
            texts = list(dict.fromkeys(text for text, _ in batch))
            try:
                vectors = await self._encode_many(texts)
            except Exception as exc:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.batches += 1
            self.queries += len(batch)
            by_text = dict(zip(texts, vectors, strict=True))
            for text, future in batch:
                if not future.done():  # its turn may have been cancelled meanwhile
                    future.set_result(by_text[text])
