"""One-off studies: each answered one question once, kept to re-run it (scripts/README.md)."""
