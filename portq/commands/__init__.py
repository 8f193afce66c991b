"""Commands: one module per subcommand; ``portq.cli`` imports them lazily.

A command parses its arguments, calls the pipeline, the ledger or the
reports, and hands its result to ``portq.reporting.output``. A command
must not hold a rule of its own, and nothing else in portq imports a
command (the import-linter contract in ``pyproject.toml`` keeps it so).
``verify_marks`` is the pytest plugin ``portq verify`` loads.
"""
