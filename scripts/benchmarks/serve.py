"""Serve the real app for the load benchmark: `python -m scripts.benchmarks.serve`.

Default settings (the embedded durable store, in a fresh temp directory, seeded on start; local
MiniLM embedder, offline reranker and chat model) with three changes, all for measuring
turns rather than side effects:

- the two rate limits are lifted (every client comes from 127.0.0.1 and sends fast);
- the disk cache of document embeddings is off: the load test repeats a fixed list of
  questions, and the cache would turn the semantic router's embedding of a repeated message
  into a lookup that real, varied traffic would not get (start-up therefore embeds the corpus);
- access logs are off and the app logs at WARNING.

It listens on 127.0.0.1 on a port the OS picks, printed as the first line of stdout
(`PORT <n>`), so the parent never races for a free port.
"""

from __future__ import annotations

import secrets
import socket
import tempfile
from pathlib import Path

import uvicorn

from app.main import create_app
from app.settings import Settings
from tuning import TUNING

UNLIMITED = 10**6


def main() -> None:
    settings = Settings(
        _env_file=None,
        mongodb_uri=None,
        embedded_store="file",  # the default: every write goes through to SQLite
        data_dir=Path(tempfile.mkdtemp(prefix="concierge-bench-")),
        embedder="local",
        reranker="offline",
        llm="offline",
        log_level="WARNING",
        embedding_cache_dir=None,
        admin_token=secrets.token_hex(16),
    )
    tuning = TUNING.without_rate_limits()
    app = create_app(settings, tuning=tuning)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
