"""A host that looks its compiled kernel up in a module-level dictionary
(``_host.cache[key](x)``) and now gets it from a cached compile helper
(``_compile(key)(x)``): a dictionary lookup is no kernel launch, so the host
"stopped launching" nothing; the same kernel and arguments are a body-level
change for a reader (NEEDS_REVIEW), never a gap (``launch-kernel`` reads no launch). A
subscripted name that is no module-level dictionary stays a launch."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops.py"
MATRIX = """\
[[row]]
id       = "OPS"
title    = "A host op that compiles and caches its kernel"
upstream = "vllm"
paths    = ["pkg/ops.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
from functools import lru_cache


def build(kind, n):
    return lambda x, out: out.copy_(x * n)


def _host(x, out):
    key = (x.dtype, x.shape[1])
    if key not in _host.cache:
        _host.cache[key] = build(x.dtype, x.shape[1])
    _host.cache[key](x, out)


_host.cache = {}
'''

AFTER = '''\
from functools import lru_cache


def build(kind, n):
    return lambda x, out: out.copy_(x * n)


def _host(x, out):
    _compile(x.dtype, x.shape[1])(x, out)


@lru_cache(maxsize=None)
def _compile(kind, n):
    return build(kind, n)
'''

# The unsound neighbour: the subscripted name is a kernel, launched on a grid,
# and the host stops launching it.
KERNEL_BEFORE = BEFORE.replace("_host.cache[key](x, out)\n", "_host.cache[key](x, out)\n    kern[(1,)](x, out)\n")
KERNEL_BEFORE = KERNEL_BEFORE.replace("def _host(", "def kern(x, out):\n    pass\n\n\ndef _host(")
KERNEL_AFTER = AFTER.replace("def _host(", "def kern(x, out):\n    pass\n\n\ndef _host(")


def _pinned(source: str) -> str:
    for name in ("build", "_host", "_compile", "kern"):
        source = source.replace(f"\ndef {name}(", f"\n# portq: ports vllm:{HOST}::{name}\ndef {name}(", 1)
    return source


def _one_commit(tmp_path, before, after):
    tree = {"vendored/ops.py": _pinned(before),
            "engine/use.py": "from vendored.ops import _host\n\n\ndef forward(x, out):\n    _host(x, out)\n"}
    return classify_commit(tmp_path, {HOST: before}, {HOST: after}, tree, matrix=MATRIX, message="cached compile")


def test_a_compiled_callable_from_a_cache_dictionary_is_no_launch(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "launch-kernel" not in verdict.rules, verdict.rules


def test_a_kernel_the_host_stops_launching_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, KERNEL_BEFORE, KERNEL_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "launch-kernel" in verdict.rules, verdict.rules


# A record stored in the cache dictionary and called through one of its fields (``cache[key]["run"](x)``),
# now called through a registry looked up by the record's name: still a lookup of a stored callable, never a
# kernel launched on a grid, so the host stopped launching nothing.
RECORD_BEFORE = '''\
def build(kind, n):
    return lambda x, out: out.copy_(x * n)


def _host(x, out):
    key = (x.dtype, x.shape[1])
    if key not in CACHE:
        CACHE[key] = {"run": build(x.dtype, x.shape[1]), "name": "plain"}
    CACHE[key]["run"](x, out)


CACHE = {}
REGISTRY = {}
'''
RECORD_AFTER = RECORD_BEFORE.replace('CACHE[key]["run"](x, out)', 'REGISTRY[CACHE[key]["name"]].run(x, out)')


def test_a_field_of_a_record_stored_in_a_cache_dictionary_is_no_launch(tmp_path):
    verdict = _one_commit(tmp_path, RECORD_BEFORE, RECORD_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "launch-kernel" not in verdict.rules, verdict.rules
