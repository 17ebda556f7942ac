"""Pure safety policy shared by ingestion and the turn: content screening."""
