"""Core: the records and rules every stage shares.

Owns the exit codes and one-line errors (``errors``), ``portq.toml``
(``config``), the verdict vocabulary and entry records (``model``), typed
evidence (``evidence``), path rules such as which files are tests
(``paths``), terminal-safe text (``terminal``), opening an SQLite file
several processes share (``shared_sqlite``), where shipped templates and demo
data live (``bundled``), writing a file a user named without harming what is
there (``safe_output``), standard streams that behave as git's
(``standard_streams``), the one TOML reader (``toml_input``) and the lazily
imported public face every stage package declares (``face``).

Must not import any other portq package, read a clone or a tree, or decide
a verdict: everything after it in the data flow builds on it.
"""

from portq.core.face import lazy_face

_FACE = {
    "PortqError": "errors",
    "ConfigError": "errors",
    "environment_error": "errors",
    "Config": "config",
    "load_config": "config",
    "Verdict": "model",
    "SymbolVerdict": "model",
    "VERDICTS": "model",
    "FLAGGED": "model",
    "most_severe": "model",
    "Evidence": "evidence",
    "Kind": "evidence",
    "Side": "evidence",
    "Location": "evidence",
    "visible": "terminal",
    "one_line": "terminal",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
