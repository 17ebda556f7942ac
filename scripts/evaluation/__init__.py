"""The eval harness behind `python -m scripts.eval`: data formats, runner, metrics, report."""
