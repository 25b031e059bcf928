"""Benchmarks and the attack corpus, run as ``python -m benchmarks.NAME``; never imported by the
product packages (core, study, ui, pages, app.py). They may use tests/harness.py."""
