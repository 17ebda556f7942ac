"""`make seed`: load the demo corpus (customers, subscriptions, orders, tickets, articles).

With MONGODB_URI set, seeds that database (idempotent upserts). Without it, seeds the embedded
store in DATA_DIR (refused while `make run` owns it; `make run` seeds at start-up anyway) and
prints what it loaded.
"""

from __future__ import annotations

import asyncio
import sys
import time

from app.providers.embeddings import build_embedder
from app.seed import seed_store
from app.settings import Settings
from app.store import StoreInUse, open_store
from app.store.indexes import ensure_regular_indexes


async def main() -> int:
    settings = Settings()
    try:
        store = open_store(settings)
    except StoreInUse as exc:  # `make run` owns the embedded store (and seeds it itself)
        print(f"seed: {exc}", file=sys.stderr)
        return 2
    try:
        await ensure_regular_indexes(store.db)
        embedder = build_embedder(settings)
        where = (
            store.describe().get("dataDir", "embedded store")
            if store.embedded
            else settings.mongodb_db
        )
        for attempt in (1, 2):
            t0 = time.perf_counter()
            report = await seed_store(store, embedder, settings.seed_dir)
            print(f"seed run {attempt} into {where} in {time.perf_counter() - t0:.1f}s:")
            print(f"  {report.summary()}")
    finally:
        await store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
