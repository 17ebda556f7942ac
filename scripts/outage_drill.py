"""A provider-outage drill: one turn while a fake Voyage server on 127.0.0.1 never answers.

    python -m scripts.outage_drill

Runs the app offline (fake embedder for the corpus, production `tuning.py` budgets), then swaps
in the Voyage embedder and reranker pointed at a local server that accepts requests and never
replies, sends one customer message through the HTTP API and prints the stored trace: how long
the turn took, what each stage reported, and what the customer got. Nothing leaves the machine.
"""

from __future__ import annotations

from app.providers.budget import RetryPolicy
from app.providers.embeddings.voyage import VoyageEmbedder
from app.providers.rerank.voyage import VoyageReranker
from app.providers.voyage_connection import VoyageConnection
from tests.apihelp import running_app
from tests.fake_voyage import API_KEY, FakeVoyage
from tuning import TUNING


def main() -> None:
    with running_app(tuning=TUNING) as api:
        fake = FakeVoyage().script(*["hang"] * 6)
        served = fake.serve()
        api.run(served.__aenter__)
        conn = VoyageConnection(
            API_KEY, base_url=fake.base_url, retry=RetryPolicy.from_tuning(TUNING)
        )
        api.services.embedder = VoyageEmbedder(conn, model="voyage-3.5", dimensions=256)
        api.services.reranker = VoyageReranker(conn)
        try:
            h = api.session("cus_castellan")
            conv = api.conversation(h)
            out = api.send(h, conv, "How do I update the room panel firmware?")
        finally:
            api.run(conn.aclose)
            api.run(served.__aexit__, None, None, None)
        meta = out["reply"]["meta"]
        print(f"turn total: {meta['latencyMs']['total']:.0f} ms ({meta['latencyMs']})")
        for error in meta["retrievalErrors"]:
            print(f"retrieval error: {error}")
        print(
            f"confidence {meta['confidence']}, {meta['passageCount']} lexical passages, "
            f"answered by {meta['model']}; Voyage requests made: {len(fake.requests)}"
        )
        print(f"reply: {out['reply']['content'][:160]}")


if __name__ == "__main__":
    main()
