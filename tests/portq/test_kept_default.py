"""A parameter that loses its default upstream (callers must now pass it)
while the port keeps the default still accepts every call upstream accepts:
the port is not behind on the interface, and dropping the fallback is body
for a reader (rule ``kept-default``, NEEDS_REVIEW rather than REAL_GAP). A
parameter that gains a default the port lacks, or one the port does not
have, stays as before."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "DEQ"
title    = "Dequantise"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

OPTIONAL = '''\
import torch


def dequant(q, scales, bits, maxq=None):
    if maxq is None:
        maxq = 2 ** bits - 1
    assert bits in (2, 4, 8)
    return (q & maxq).to(scales.dtype) * scales
'''

REQUIRED = '''\
import torch


def dequant(q, scales, bits, maxq):
    assert bits in (2, 4, 8)
    return (q & maxq).to(scales.dtype) * scales
'''

GAINED = '''\
import torch


def dequant(q, scales, bits=4, maxq=None):
    if maxq is None:
        maxq = 2 ** bits - 1
    assert bits in (2, 4, 8)
    return (q & maxq).to(scales.dtype) * scales
'''

TREE = {
    "kernels/deq.py": '''\
import torch


# portq: ports vllm:ops/deq.py::dequant
def dequantize(q, scales, bits, maxq=None):
    if maxq is None:
        maxq = 2 ** bits - 1
    assert bits in (2, 4, 8)
    return (q & maxq).to(scales.dtype) * scales
''',
    "engine/model.py": "from kernels.deq import dequantize\n\n\ndef run(q, s):\n    return dequantize(q, s, 4, 15)\n",
}


def _dequant(verdict):
    return next(s for s in verdict.symbols if s.symbol == "dequant")


def test_a_default_upstream_drops_that_the_port_keeps_is_for_a_reader_not_a_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/deq.py": OPTIONAL}),
        CommitSpec("callers pass maxq", files={"ops/deq.py": REQUIRED}),
    ], TREE, matrix=MATRIX)
    symbol = _dequant(verdicts[1])
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "kept-default" in symbol.rules, symbol.rules


def test_a_default_upstream_gains_that_the_port_lacks_stays_a_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/deq.py": OPTIONAL}),
        CommitSpec("bits defaults to 4", files={"ops/deq.py": GAINED}),
    ], TREE, matrix=MATRIX)
    symbol = _dequant(verdicts[1])
    assert symbol.verdict == REAL_GAP, symbol.reason
    assert "kept-default" not in symbol.rules
