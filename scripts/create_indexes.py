"""`make indexes`: create/update every index defined in atlas_indexes/.

Against a cluster (MONGODB_URI): regular indexes, then the three search indexes, waiting until
each is queryable at our definition (numDimensions from the active embedder), with a progress
line; a FAILED index stops the run with Atlas's message. Embedded: regular indexes plus the
LocalSearch equivalents built over a freshly seeded in-process store, with their sizes (a check
that the definitions and the local backend agree).
"""

from __future__ import annotations

import asyncio
import time

from app.providers.embeddings import build_embedder
from app.services import build_search, build_services
from app.settings import Settings
from app.store.indexes import ensure_search_indexes, load_regular, stale_analyzed_articles


async def main() -> None:
    settings = Settings()
    services = await build_services(settings)
    try:
        print(f"regular indexes: {len(load_regular())} ensured")
        if not services.store.embedded:
            dims = services.embedder.dimensions  # the active embedder, not a settings guess
            checks = await ensure_search_indexes(services.store.db, dims, progress=print)
            for c in checks:
                print(f"search index {c.name}: status {c.status}, queryable {c.queryable}, ok")
            stale = await stale_analyzed_articles(services.store.db)
            if stale:
                print(
                    f"{stale} published articles lack current searchTerms (BM25 cannot find "
                    "them on Atlas): run make seed or make ingest to rewrite them"
                )
            return
        from app.seed import seed_store

        t0 = time.perf_counter()
        report = await seed_store(services.store, build_embedder(settings), settings.seed_dir)
        print(f"embedded: seeded in {time.perf_counter() - t0:.1f}s ({report.summary()})")
        search = await build_search(services)
        describe = getattr(search, "describe", None)
        print(f"LocalSearch built: {describe() if callable(describe) else search}")
    finally:
        await services.close()


if __name__ == "__main__":
    asyncio.run(main())
