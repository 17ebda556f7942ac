"""The knowledge loop: resolved handoffs become tickets, unanswered questions become clusters,
clusters with resolutions become draft articles a person edits and publishes.

Pure policy lives in `resolution`, `gaps` and `drafts`; `loop` wires them to the store, the
embedder and the search backend.
"""
