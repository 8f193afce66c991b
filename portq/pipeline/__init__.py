"""Pipeline: the stages joined into what a command runs.

Owns the scan (``scan``: history, mapping, classifier, ledger, one wave),
the workspace a command works on (``workspace``: configuration, matrix,
tree index, ledger, which upstream and which wave) and the embedded demo
(``demo``).

Must not parse command-line arguments or choose an output format: the
commands do that and call in here.
"""

from importlib import import_module

_FACE = {
    "run_scan": "scan",
    "Workspace": "workspace",
    "run_demo": "demo",
}
"""The package's public names and the module that defines each."""

__all__ = sorted(_FACE)


def __getattr__(name: str):
    """A name of the face, imported from its module when first asked for (so
    importing one module of the package never imports the others)."""
    if name in _FACE:
        return getattr(import_module(f"{__name__}.{_FACE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
