"""Builders of the generated parts of the docs (`python -m scripts.docs`)."""
