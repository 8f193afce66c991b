"""A package's public face, imported lazily.

Each stage package names its public names and the module that defines each
(``_FACE``); importing the package must not import those modules, so that
importing one module of a package never imports its siblings (``portq scan``
starts fast, and the layering contracts see only real imports).

This module only builds the package's ``__getattr__`` and ``__all__``; it
imports nothing of portq.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable


def lazy_face(package: str, face: dict[str, str]) -> tuple[Callable[[str], Any], list[str]]:
    """``(__getattr__, __all__)`` for ``package`` whose public names are the
    keys of ``face``, each imported from ``package.<module>`` when first asked for."""

    def __getattr__(name: str) -> Any:
        if name in face:
            return getattr(import_module(f"{package}.{face[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__, sorted(face)
