"""A ported host whose whole change adds statement calls of an upstream helper that only marks a
profiler range (``util.range_begin("kernel")`` / ``util.range_end()``, the helpers' bodies ``if
config.profiling: nvtx.push_range(message)``) around what it already did (``tracing-calls``): the
marks annotate a timeline and compute nothing, so the change is cosmetic. A helper that does
anything else, a call whose arguments compute something, or any other change stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops.py"
MATRIX = """\
[[row]]
id       = "OPS"
title    = "A host that launches a kernel"
upstream = "vllm"
paths    = ["pkg/ops.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

OPS = '''\
from pkg import kern, util


def launch(x, n):
    out = x.new_empty(n)
    kern.fill[(n,)](out, x, n)
    return out
'''
OPS_AFTER = '''\
from pkg import kern, util


def launch(x, n):
    out = x.new_empty(n)

    util.range_begin("kern.fill")
    kern.fill[(n,)](out, x, n)
    util.range_end()
    return out
'''
UTIL_INIT = "from .util import *\n"
UTIL = '''\
import nvtx

from pkg import config


def dtype(x):
    return x.dtype


def range_begin(message: str):
    if config.profiling:
        nvtx.push_range(message, color="green", domain="pkg")


def range_end():
    if config.profiling:
        nvtx.pop_range(domain="pkg")
'''

# Unsound neighbours.
UTIL_SYNCS = UTIL.replace('        nvtx.pop_range(domain="pkg")\n',
                          '        nvtx.pop_range(domain="pkg")\n    torch.cuda.synchronize()\n')
OPS_COMPUTED_ARGUMENT = OPS_AFTER.replace('util.range_begin("kern.fill")', 'util.range_begin(x.sum())')
OPS_ALSO_CHANGED = OPS_AFTER.replace("return out", "return out * 2")


def _entry(tmp_path, ops_after=OPS_AFTER, util=UTIL):
    tree = {"vendored/ops.py": OPS.replace("\ndef launch(", f"\n# portq: ports vllm:{HOST}::launch\ndef launch("),
            "engine/use.py": "from vendored.ops import launch\n\n\ndef run(x):\n    return launch(x, 8)\n"}
    base = {HOST: OPS, "pkg/__init__.py": "", "pkg/config.py": "profiling = False\n", "pkg/util/__init__.py": "",
            "pkg/util/util.py": "def dtype(x):\n    return x.dtype\n", "pkg/kern.py": "def fill():\n    pass\n"}
    return classify_commit(tmp_path, base, {**base, HOST: ops_after, "pkg/util/__init__.py": UTIL_INIT,
                                            "pkg/util/util.py": util}, tree, matrix=MATRIX, message="add traces")


def test_added_calls_of_a_helper_that_only_marks_a_profiler_range_are_cosmetic(tmp_path):
    verdict = _entry(tmp_path)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert verdict.justification == "cosmetic", verdict.justification
    launch = next(s for s in verdict.symbols if s.symbol == "launch")
    assert "tracing-calls" in launch.rules, launch.rules
    assert "util.range_begin" in launch.reason, launch.reason


def test_a_helper_that_also_synchronises_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, util=UTIL_SYNCS)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_trace_call_whose_argument_computes_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, OPS_COMPUTED_ARGUMENT)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_another_change_beside_the_trace_calls_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, OPS_ALSO_CHANGED)
    assert verdict.verdict in FLAGGED, verdict.reason
