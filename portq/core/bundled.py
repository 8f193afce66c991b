"""Where the files portq's commands read at run time live: the report
templates and the demo's example histories, trees and matrix.

In a checkout (and an editable install) they are read where they are
maintained: ``templates/``, ``examples/``, ``matrix/`` and ``kernels/`` at the
top of the repository. A regular install (``pip install .``, the wheel,
``pipx``) has no repository beside the package, so the build copies them into
the package as ``portq/_data/`` (``setup.py`` lists what is copied, and
``MANIFEST.in`` puts the same files in the sdist).

This module only answers "where"; it must not read, render or write any of
those files, and it imports nothing from portq.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The installed (or checked-out) ``portq`` package (this module is ``portq/core/bundled.py``)."""

DATA_DIR = PACKAGE_DIR / "_data"
"""What a regular install ships: ``templates/`` and ``demo/`` (the checkout's layout, trimmed)."""


def _checkout() -> Path | None:
    root = PACKAGE_DIR.parent
    if (root / "templates").is_dir() and (root / "examples" / "upstream").is_dir():
        return root
    return None


def templates_dir() -> Path:
    """The report templates: ``templates/`` of a checkout, else the installed copy."""
    root = _checkout()
    return root / "templates" if root is not None else DATA_DIR / "templates"


def demo_root() -> Path:
    """A directory laid out like this repository for the demo: ``examples/upstream``,
    ``examples/stale-tree``, ``matrix/kernel-matrix.toml`` and ``kernels/``."""
    root = _checkout()
    return root if root is not None else DATA_DIR / "demo"
