"""The sections of `make bench` (see `scripts/bench.py`), one module each, plus shared helpers."""
