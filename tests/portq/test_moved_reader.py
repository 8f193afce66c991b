"""What a ported definition reads at module level stays part of it after
upstream renames the definition (rule ``moved-reader``): a module-level
binding the renamed carrier of an anchored body reads — in its decorators
too, such as the configs an autotuner is given — is read by the port, so a
change to it needs review rather than not-ported; a binding nothing ported
reads stays not-ported."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
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

MODULE = '''\
import itertools

import torch
import triton
import triton.language as tl


def make_configs(blocks, warps):
    return [triton.Config({{"BLOCK": b}}, num_warps=w) for b, w in itertools.product(blocks, warps)]


CONFIGS = make_configs([1024], {warps})
UNUSED_TABLE = {unused}


@triton.autotune(CONFIGS, key=["n"])
@triton.jit
def {name}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def dequant(x):
    y = torch.empty_like(x)
    {name}[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    return y
'''

TREE = {
    "kernels/deq.py": '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/deq.py::_deq_kernel
@triton.autotune([triton.Config({"BLOCK": 256}, num_warps=4)], key=["n"])
@triton.jit
def deq_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


# portq: ports vllm:ops/deq.py::dequant
def deq(x):
    y = torch.empty_like(x)
    deq_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    return y
''',
    "engine/model.py": "from kernels.deq import deq\n\n\ndef run(x):\n    return deq(x)\n",
}


def _module(name="_deq_kernel", warps="1", unused="{}"):
    return MODULE.format(name=name, warps=warps, unused=unused)


def _toplevel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "<toplevel>")


def test_a_binding_the_renamed_carrier_of_a_ported_kernel_reads_in_its_decorator_needs_review(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/deq.py": _module()}),
        CommitSpec("rename the kernel", files={"ops/deq.py": _module(name="dequant_kernel")}),
        CommitSpec("fix the warps", files={"ops/deq.py": _module(name="dequant_kernel", warps="[1]")}),
    ], TREE, matrix=MATRIX)
    fixed = _toplevel(verdicts[2])
    assert fixed.verdict == NEEDS_REVIEW, fixed.reason
    assert "moved-reader" in fixed.rules and "CONFIGS" in fixed.reason, fixed.reason
    assert verdicts[2].verdict == NEEDS_REVIEW


def test_a_binding_no_ported_definition_reads_stays_not_ported_after_the_rename(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/deq.py": _module()}),
        CommitSpec("rename the kernel", files={"ops/deq.py": _module(name="dequant_kernel")}),
        CommitSpec("change a table", files={"ops/deq.py": _module(name="dequant_kernel", unused="{1: 2}")}),
    ], TREE, matrix=MATRIX)
    table = _toplevel(verdicts[2])
    assert table.verdict == NOT_APPLICABLE and table.justification == "not-ported", table.reason
