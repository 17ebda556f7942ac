"""A provider-outage drill: one turn while a fake Voyage server on 127.0.0.1 never answers.

    python -m scripts.studies.outage_drill

Runs the app offline (fake embedder for the corpus, production `tuning.py` budgets), then swaps
in the Voyage embedder (for the router and retrieval) and reranker pointed at a local server that
accepts requests and never replies, sends two customer messages through the HTTP API and prints
the stored traces: how long each turn took, what each stage reported, what the customer got.
Nothing leaves the machine.
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
        voyage = VoyageEmbedder(conn, model="voyage-3.5", dimensions=256)
        api.services.embedder = api.services.router.embedder = voyage
        api.services.reranker = VoyageReranker(conn)
        try:
            h = api.session("cus_castellan")
            conv = api.conversation(h)
            outs = [
                api.send(h, conv, "How do I update the room panel firmware?"),
                api.send(h, conv, "And how do I reset the room panel?"),
            ]
        finally:
            api.run(conn.aclose)
            api.run(served.__aexit__, None, None, None)
        for n, out in enumerate(outs, start=1):
            meta = out["reply"]["meta"]
            print(f"turn {n} total: {meta['latencyMs']['total']:.0f} ms ({meta['latencyMs']})")
            for error in meta["retrievalErrors"]:
                print(f"  retrieval error: {error}")
            print(
                f"  intent {meta['intent']}, confidence {meta['confidence']}, "
                f"{meta['passageCount']} lexical passages, answered by {meta['model']}"
            )
            print(f"  reply: {out['reply']['content'][:120]}")
        print(f"Voyage requests made in both turns: {len(fake.requests)}")


if __name__ == "__main__":
    main()
