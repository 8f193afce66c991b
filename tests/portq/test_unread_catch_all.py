"""A keyword catch-all the body never reads (``unread-catch-all``).

An entry point gains ``**kwargs`` and never reads it: every call the port's
signature accepts computes what it did, and the keywords upstream now swallows
select nothing. A port without the catch-all is not proven behind on that
alone: for a reader (at most NEEDS_REVIEW), never REAL_GAP. A catch-all the body
passes on, or reads, is an input like any other and keeps the gap."""
from __future__ import annotations

from portq.core.model import FLAGGED, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch


def scaled_rows(x, scale=None):
    scale = scale if scale is not None else x.shape[-1] ** -0.5
    return _rows(x, scale)


def _rows(x, scale, **options):
    return x * scale
'''

AFTER = BEFORE.replace("def scaled_rows(x, scale=None):\n", "def scaled_rows(x, scale=None, **kwargs):\n"
                       "    assert x.stride(-1) == 1, \"the last dimension must be contiguous\"\n")
PASSED_ON = AFTER.replace("    return _rows(x, scale)\n", "    return _rows(x, scale, **kwargs)\n")

PORT = '''# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scaled_rows
def scale_rows(x, scale=None):
    if scale is None:
        scale = x.shape[-1] ** -0.5
    return x * scale
'''


def _host(tmp_path, after):
    tree = {"kernels/mla_prefix/scale.py": PORT,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale_rows\n\n\n"
                                            "def apply(x):\n    return scale_rows(x)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: BEFORE}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "scaled_rows")


def test_an_unread_keyword_catch_all_is_for_a_reader_not_a_gap(tmp_path):
    host = _host(tmp_path, AFTER)
    assert host.verdict in FLAGGED and host.verdict != REAL_GAP, host.reason
    assert "unread-catch-all" in host.rules, host.rules


def test_a_catch_all_passed_on_is_still_a_gap(tmp_path):
    host = _host(tmp_path, PASSED_ON)
    assert host.verdict == REAL_GAP, host.reason
    assert "unread-catch-all" not in host.rules
