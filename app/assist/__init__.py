"""Agent assist: a drafted reply with its sources and similar resolved cases for the person who
takes a handoff (issue 43). Layering: api → assist → turn/search/store."""

from app.assist.suggest import record_sent, suggestion_for

__all__ = ["record_sent", "suggestion_for"]
