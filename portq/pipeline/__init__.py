"""Pipeline: the stages joined into what a command runs.

Owns the scan (``scan``: history, mapping, classifier, ledger, one wave),
the workspace a command works on (``workspace``: configuration, matrix,
tree index, ledger, which upstream and which wave) and the embedded demo
(``demo``).

Must not parse command-line arguments or choose an output format: the
commands do that and call in here.
"""

from portq.core.face import lazy_face

_FACE = {
    "run_scan": "scan",
    "Workspace": "workspace",
    "run_demo": "demo",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
