"""Equivalence rules: upstream's change brings its definition to the shape the port already had (DESIGN §5).

A re-implementation often runs ahead of upstream: it takes as an input what
upstream still computes inside, under its own name. When upstream catches up
the port is in sync, and saying "for a reader" would be a false alarm:

* ``port-has-flag``: a compile-time flag upstream adds (a C++ template
  parameter or a ``tl.constexpr``) is already an input of a cross-language
  port when the port takes a parameter named as the flag without its
  boolean prefix (``is_``, ``has_``, ``use_``, ``enable_``, ``with_``:
  ``Is_causal`` → ``causal``) and upstream's old definition had no parameter
  of that name (so the port's input is its own, not one of upstream's under
  another role). IN_SYNC, saying which input it is.

Example diff (IN_SYNC for a port ``def fwd_hdim64(q, k, v, out, causal)``)::

    -template<typename T>
    +template<typename T, bool Is_causal>
     void run_mha_fwd_hdim64(Flash_fwd_params &params, cudaStream_t stream) {
    -    BOOL_SWITCH(params.is_causal, Is_causal, [&] {

This module states the rule and picks the port's parameter from two
signatures; it reads no git and no tree index, and never names a corpus
symbol, path or commit.
"""

from __future__ import annotations

from portq.classifier.rules import Rule

RULES = (
    Rule("port-has-flag", ("IN_SYNC",),
         "A compile-time flag upstream adds is already an input of a cross-language port that takes a parameter "
         "named as the flag without its boolean prefix (`Is_causal` → `causal`), one upstream's old definition did "
         "not have: IN_SYNC.",
         "-template<typename T>\n+template<typename T, bool Is_causal>   (the port takes causal)",
         "classifier.rules.equivalence.port_input_for_flag, "
         "classifier.rules.parameters._cross_language_constexpr_items"),
)

_FLAG_PREFIXES = ("is_", "has_", "use_", "enable_", "with_")


def port_input_for_flag(name: str, old, port) -> str | None:
    """The port's parameter (normalised) that already stands for the flag
    ``name`` (normalised) upstream adds, or None (see the module)."""
    for prefix in _FLAG_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            base = name[len(prefix):]
            if port.param(base) is not None and old.param(base) is None:
                return base
    return None
