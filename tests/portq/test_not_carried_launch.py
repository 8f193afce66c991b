"""A launch of a kernel the port declares ``not-carried`` (``not-carried-launch``): the host used to
launch either the kernel the port mirrors or a fused sibling the port declares it does not carry, and
now launches only the sibling, on a new grid. The kernel the port mirrors is unchanged and the port's
decision to launch it instead of the sibling is recorded in-tree, so what changed is the host's body
around a kernel the port does not run: for a reader (NEEDS_REVIEW), not the port's interface gap. The
same commit without the declaration, or a host that now launches a kernel nobody declared, stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "aiter/ops/triton/rotate.py"
KERNELS = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _rotate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    head = tl.program_id(1)
    tl.store(out_ptr + head * n + offs, tl.load(x_ptr + head * n + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def _rotate_pair_kernel(q_ptr, k_ptr, n, heads, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    for head in range(heads):
        tl.store(q_ptr + head * n + offs, tl.load(q_ptr + head * n + offs, mask=offs < n) * 2, mask=offs < n)
        tl.store(k_ptr + head * n + offs, tl.load(k_ptr + head * n + offs, mask=offs < n) * 2, mask=offs < n)
'''
BEFORE = KERNELS + '''

def rotate(q, k, n, heads):
    BLOCK = 128
    if q.shape[1] == k.shape[1]:
        grid = (triton.cdiv(n, BLOCK), heads)
        _rotate_pair_kernel[grid](q, k, n, heads, BLOCK=BLOCK)
    else:
        grid = (triton.cdiv(n, BLOCK), heads)
        _rotate_kernel[grid](q, q, n, BLOCK=BLOCK)
        _rotate_kernel[grid](k, k, n, BLOCK=BLOCK)
    return q, k
'''
AFTER = KERNELS + '''

def rotate(q, k, n, heads):
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    _rotate_pair_kernel[grid](q, k, n, heads, BLOCK=BLOCK)
    return q, k
'''
"""Only the sibling is launched now, on a one-axis grid; ``_rotate_kernel`` is unchanged."""

# Unsound neighbour: the host now launches a kernel nobody declared.
OTHER_AFTER = KERNELS + '''

@triton.jit
def _rotate_fused_kernel(q_ptr, k_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(q_ptr + offs, tl.load(q_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def rotate(q, k, n, heads):
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    _rotate_fused_kernel[grid](q, k, n, BLOCK=BLOCK)
    return q, k
'''

DECLARATION = f"# portq: not-carried vllm:{HOST}::_rotate_pair_kernel -- one launch per tensor, whatever the heads\n"


def _tree(declared: bool) -> dict[str, str]:
    port = (
        "import triton\nimport triton.language as tl\n\n\n"
        f"# portq: ports vllm:{HOST}::_rotate_kernel\n"
        "@triton.jit\n"
        "def _double_kernel(src, dst, count, TILE: tl.constexpr):\n"
        "    i = tl.program_id(0) * TILE + tl.arange(0, TILE)\n"
        "    h = tl.program_id(1)\n"
        "    tl.store(dst + h * count + i, tl.load(src + h * count + i, mask=i < count) * 2, mask=i < count)\n\n\n"
        f"# portq: ports vllm:{HOST}::rotate\n"
        + (DECLARATION if declared else "")
        + "def rotate_both(q, k, count, heads):\n"
        "    TILE = 128\n"
        "    grid = (triton.cdiv(count, TILE), heads)\n"
        "    _double_kernel[grid](q, q, count, TILE=TILE)\n"
        "    _double_kernel[grid](k, k, count, TILE=TILE)\n"
        "    return q, k\n"
    )
    caller = ("from portq_kernels.mla_prefix.rotate import rotate_both\n\n\n"
              "def prepare(q, k, n, h):\n    return rotate_both(q, k, n, h)\n")
    return {"kernels/mla_prefix/rotate.py": port, "kernels/mla_prefill/prepare.py": caller}


def _one_commit(tmp_path, after, declared=True):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, _tree(declared), message="fused only")


def _host(verdict):
    return next(s for s in verdict.symbols if s.symbol == "rotate")


def test_a_host_that_now_launches_only_a_declared_not_carried_kernel_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    host = _host(verdict)
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "not-carried-launch" in host.rules, host.rules
    assert "rotate_pair" in host.reason and "not carried" in host.reason, host.reason


def test_without_the_declaration_it_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, AFTER, declared=False)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "not-carried-launch" not in verdict.rules


def test_a_host_that_now_launches_a_kernel_nobody_declared_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, OTHER_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "not-carried-launch" not in verdict.rules
