"""A launch that replaces a launch of a kernel the port has never had (``unported-launch-replaced``).

An earlier upstream commit gave a host a second launch, of a kernel the port never took (no in-tree
definition, no anchor): that commit's new launch is the interface change, and its own entry reports
it. A later commit swaps that launch for a launch of another new kernel. For this port nothing about
its launch shape changes: the launch it lacks is still one it lacks, so what changed is the host's
body around kernels the port does not run, for a reader (NEEDS_REVIEW), never REAL_GAP through
``launch-kernel`` alone. A new kernel replacing one the port DOES launch, or one the tree holds a
definition of, stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "aiter/ops/triton/scale.py"
KERNELS = '''\
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def _scale_fp8_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=offs < n) * 2).to(tl.float8e4nv), mask=offs < n)


@triton.jit
def _scale_shared_kernel(x_ptr, out_ptr, n, scale, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs, mask=offs < n) * scale
    if MODE == 1:
        y = y.to(tl.float8e4nv)
    tl.store(out_ptr + offs, y, mask=offs < n)
'''
BEFORE = KERNELS + '''

def scale(x, out, n, factor, fp8=False):
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    if fp8:
        _scale_fp8_kernel[grid](x, out, n, BLOCK=BLOCK)
    else:
        _scale_kernel[grid](x, out, n, BLOCK=BLOCK)
    return out
'''
AFTER = KERNELS + '''

def scale(x, out, n, factor, fp8=False):
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    if fp8:
        _scale_shared_kernel[grid](x, out, n, factor, MODE=1, BLOCK=BLOCK)
    else:
        _scale_kernel[grid](x, out, n, BLOCK=BLOCK)
    return out
'''
"""The FP8 branch launches the shared kernel instead of the FP8 one; the plain launch is the same."""

# Unsound neighbour: the plain launch (the one the port has) is replaced by the shared kernel.
PLAIN_REPLACED = KERNELS + '''

def scale(x, out, n, factor, fp8=False):
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    if fp8:
        _scale_fp8_kernel[grid](x, out, n, BLOCK=BLOCK)
    else:
        _scale_shared_kernel[grid](x, out, n, factor, MODE=0, BLOCK=BLOCK)
    return out
'''


def _tree(holds_fp8: bool = False) -> dict[str, str]:
    port = (
        "import triton\nimport triton.language as tl\n\n\n"
        f"# portq: ports vllm:{HOST}::_scale_kernel\n"
        "@triton.jit\n"
        "def _double_kernel(src, dst, count, TILE: tl.constexpr):\n"
        "    i = tl.program_id(0) * TILE + tl.arange(0, TILE)\n"
        "    tl.store(dst + i, tl.load(src + i, mask=i < count) * 2, mask=i < count)\n\n\n"
        + (f"# portq: ports vllm:{HOST}::_scale_fp8_kernel\n"
           "@triton.jit\n"
           "def _double_fp8_kernel(src, dst, count, TILE: tl.constexpr):\n"
           "    i = tl.program_id(0) * TILE + tl.arange(0, TILE)\n"
           "    tl.store(dst + i, (tl.load(src + i, mask=i < count) * 2).to(tl.float8e4nv), mask=i < count)\n\n\n"
           if holds_fp8 else "")
        + f"# portq: ports vllm:{HOST}::scale\n"
        "def double(src, dst, count):\n"
        "    TILE = 128\n"
        "    grid = (triton.cdiv(count, TILE),)\n"
        "    _double_kernel[grid](src, dst, count, TILE=TILE)\n"
        "    return dst\n"
    )
    caller = ("from portq_kernels.mla_prefix.scale import double\n\n\n"
              "def prepare(x, out, n):\n    return double(x, out, n)\n")
    return {"kernels/mla_prefix/scale.py": port, "kernels/mla_prefill/prepare.py": caller}


def _host(verdict):
    return next(s for s in verdict.symbols if s.symbol == "scale")


def test_a_launch_replacing_one_of_a_kernel_the_port_never_had_is_for_a_reader(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, _tree(), message="shared fp8 path")
    host = _host(verdict)
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "unported-launch-replaced" in host.rules, host.rules
    assert "scale_fp8" in host.reason and "scale_shared" in host.reason, host.reason
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_new_kernel_replacing_the_launch_the_port_has_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: PLAIN_REPLACED}, _tree(), message="shared plain path")
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "unported-launch-replaced" not in verdict.rules


def test_a_replaced_kernel_the_tree_holds_a_definition_of_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, _tree(holds_fp8=True), message="shared fp8 path")
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "unported-launch-replaced" not in verdict.rules
