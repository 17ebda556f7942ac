"""How much the message's own embedding should weigh beside its skeleton's in the shape model.

    python -m scripts.studies.shape_weight

Leave-one-out accuracy over the rows of `app/language/shapes.yaml` (each row classified by the
router's softmax model fitted on all the others), for the skeleton alone, the message alone and
both at several weights. The rows are the project's own; no eval data is read. The chosen weight
is `shape_message_weight` in tuning.py.
"""

from __future__ import annotations

import asyncio

import numpy as np

from app.language.shapes import shape_rows, skeleton
from app.providers.embeddings.local_minilm import MiniLMEmbedder
from app.turn.router import SoftmaxModel, _normalise, strip_amounts

WEIGHTS = (0.0, 0.4, 0.6, 0.8, 1.0, None)  # None: the message alone


def _leave_one_out(x: np.ndarray, labels: list[str]) -> float:
    right = 0
    for i in range(len(labels)):
        model = SoftmaxModel.fit(np.delete(x, i, 0), labels[:i] + labels[i + 1 :])
        probs = model.probabilities(x[i])
        right += max(probs, key=lambda s: probs[s]) == labels[i]
    return right / len(labels)


async def main() -> None:
    rows = shape_rows()
    texts = [strip_amounts(r.message) for r in rows]
    embedder = MiniLMEmbedder()
    message = _normalise(np.asarray(await embedder.embed_documents(texts), float))
    bare = _normalise(np.asarray(await embedder.embed_documents([skeleton(t) for t in texts])))
    labels = [r.shape for r in rows]
    print(f"{len(rows)} rows, {len(set(labels))} shapes")
    for w in WEIGHTS:
        x = message if w is None else _normalise(np.hstack([w * message, bare]))
        name = "message alone" if w is None else f"weight {w}"
        print(f"{name:>14}: leave-one-out accuracy {_leave_one_out(x, labels):.3f}")


if __name__ == "__main__":
    asyncio.run(main())
