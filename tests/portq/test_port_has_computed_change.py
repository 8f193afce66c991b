"""What a Triton kernel computes, not how it spells it (issue 24, classes 5 and 8;
``port-has-computed-change``, ``cosmetic-computation``).

Inside a ``@triton.jit`` body two rewrites keep every value exactly: the operands of a ``*`` (and of a
``+`` on numbers) swapped, and a local assigned once and read once replaced by its value where nothing
between writes memory or calls code that may. A port that holds upstream's new computation only up to
those rewrites already has the change (IN_SYNC), and an upstream change that is only such a rewrite is
cosmetic. A re-association, a subtraction or matrix product with its operands swapped, a load moved across
a store, or host Python (where ``+`` may join lists and ``*`` may call user code) is not such a rewrite and
stays flagged.
"""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE

SCALE_MATRIX = MATRIX.replace('"ops/utils/*.py"]', '"ops/utils/*.py", "ops/scale.py"]')

UPSTREAM = '''\
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(x_ptr + offs, mask=live, other=0.0)
    a = tl.load(a_ptr + offs, mask=live, other=0.0)
    b = tl.load(b_ptr + offs, mask=live, other=0.0)
{compute}
    tl.store(out_ptr + offs, y, mask=live)
'''

PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/scale.py::scale_kernel
@triton.jit
def scaled_product(src_ptr, lhs_ptr, rhs_ptr, dst_ptr, total, TILE: tl.constexpr):
    flat = tl.program_id(0) * TILE + tl.arange(0, TILE)
    live = flat < total
{compute}
'''

OLD = "    y = (x.to(tl.float16) * a) * b"
NEW = "    y = (x.to(tl.float32) * a) * b"

LOADS = ("    v = tl.load(src_ptr + flat, mask=live, other=0.0)\n"
         "    p = tl.load(lhs_ptr + flat, mask=live, other=0.0)\n"
         "    q = tl.load(rhs_ptr + flat, mask=live, other=0.0)\n")


def _entry(tmp_path, port_compute, old=OLD, new=NEW, port_template=PORT):
    tree = {**TREE, "kernels/scale.py": port_template.format(compute=port_compute)}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scale.py": UPSTREAM.format(compute=old)}),
        CommitSpec("change", files={"ops/scale.py": UPSTREAM.format(compute=new)}),
    ], tree, matrix=SCALE_MATRIX)
    return verdicts[1]


def test_a_port_computing_the_new_value_into_its_store_with_operands_swapped_is_in_sync(tmp_path):
    entry = _entry(tmp_path, LOADS + "    tl.store(dst_ptr + flat, q * (p * v.to(tl.float32)), mask=live)")
    assert entry.verdict == IN_SYNC, entry.reason
    assert "port-has-computed-change" in entry.rules


def test_a_port_computing_the_new_value_through_single_use_locals_is_in_sync(tmp_path):
    entry = _entry(tmp_path, LOADS + "    w = v.to(tl.float32)\n    w = p * w\n    y = q * w\n"
                                     "    tl.store(dst_ptr + flat, y, mask=live)")
    assert entry.verdict == IN_SYNC, entry.reason
    assert "port-has-computed-change" in entry.rules


def test_a_port_with_the_old_value_in_another_order_needs_review(tmp_path):
    entry = _entry(tmp_path, LOADS + "    tl.store(dst_ptr + flat, q * (p * v.to(tl.float16)), mask=live)")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason


def test_a_reassociated_product_needs_review(tmp_path):
    # (x * a) * b and x * (a * b) round differently in floating point.
    entry = _entry(tmp_path, LOADS + "    tl.store(dst_ptr + flat, v.to(tl.float32) * (p * q), mask=live)")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason


def test_a_subtraction_with_its_operands_swapped_needs_review(tmp_path):
    entry = _entry(tmp_path, LOADS + "    tl.store(dst_ptr + flat, q * (p - v.to(tl.float32)), mask=live)",
                   old="    y = (x.to(tl.float16) - a) * b", new="    y = (x.to(tl.float32) - a) * b")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason


def test_a_matrix_product_with_its_operands_swapped_needs_review(tmp_path):
    dot = _entry(tmp_path, LOADS + "    tl.store(dst_ptr + flat, tl.dot(p, v.to(tl.float32)) * q, mask=live)",
                 old="    y = tl.dot(x.to(tl.float16), a) * b", new="    y = tl.dot(x.to(tl.float32), a) * b")
    assert dot.verdict in FLAGGED and dot.verdict != IN_SYNC, dot.reason


def test_a_matmul_operator_with_its_operands_swapped_needs_review(tmp_path):
    matmul = _entry(tmp_path, LOADS + "    tl.store(dst_ptr + flat, (p @ v.to(tl.float32)) * q, mask=live)",
                    old="    y = (x.to(tl.float16) @ a) * b", new="    y = (x.to(tl.float32) @ a) * b")
    assert matmul.verdict in FLAGGED and matmul.verdict != IN_SYNC, matmul.reason


def test_a_load_the_port_reads_before_a_store_stays_a_local(tmp_path):
    # The port loads p, then writes through lhs_ptr: inlining the load past the store could read the new value.
    entry = _entry(tmp_path, LOADS + "    tl.store(lhs_ptr + flat, v, mask=live)\n"
                                     "    tl.store(dst_ptr + flat, q * (p * v.to(tl.float32)), mask=live)")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason


def test_a_load_the_port_reads_before_a_call_of_its_own_stays_a_local(tmp_path):
    entry = _entry(tmp_path, LOADS + "    _flush(lhs_ptr)\n"
                                     "    tl.store(dst_ptr + flat, q * (p * v.to(tl.float32)), mask=live)")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason


def test_a_local_the_port_reads_twice_stays_a_local(tmp_path):
    # w is read twice: replacing it would compute v.to(tl.float32) twice, which the port does not write.
    entry = _entry(tmp_path, LOADS + "    w = p * v.to(tl.float32)\n"
                                     "    tl.store(dst_ptr + flat, q * w, mask=live)\n"
                                     "    tl.store(lhs_ptr + flat, w, mask=live)")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason


def test_host_python_is_compared_as_written(tmp_path):
    # Outside a jit body `a * b` may be a user __mul__ and `a + b` may join lists: no operand is reordered.
    host_upstream = '''\
import torch


def combine(x, a, b):
{compute}
    return y
'''
    host_port = '''\
import torch


# portq: ports vllm:ops/scale.py::combine
def combine(src, lhs, rhs):
{compute}
'''
    tree = {**TREE, "kernels/scale.py": host_port.format(compute="    return rhs * (lhs * src.to(torch.float32))")}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scale.py": host_upstream.format(compute="    y = (x.to(torch.float16) * a) * b")}),
        CommitSpec("change", files={"ops/scale.py": host_upstream.format(compute="    y = (x.to(torch.float32) * a) * b")}),
    ], tree, matrix=SCALE_MATRIX)
    assert verdicts[1].verdict in FLAGGED and verdicts[1].verdict != IN_SYNC, verdicts[1].reason


# --- upstream's own change is only such a rewrite: cosmetic --------------------------------

SAME_PORT = LOADS + "    tl.store(dst_ptr + flat, (v.to(tl.float32) * p) * q, mask=live)"


def test_operands_swapped_upstream_is_cosmetic(tmp_path):
    entry = _entry(tmp_path, SAME_PORT, old=NEW, new="    y = b * (a * x.to(tl.float32))")
    assert entry.verdict == NOT_APPLICABLE and entry.justification == "cosmetic", entry.reason
    assert "cosmetic-computation" in entry.rules


def test_a_single_use_local_inlined_upstream_is_cosmetic(tmp_path):
    entry = _entry(tmp_path, SAME_PORT, old="    t = x.to(tl.float32)\n    t = t * a\n    y = t * b", new=NEW)
    assert entry.verdict == NOT_APPLICABLE and entry.justification == "cosmetic", entry.reason
    assert "cosmetic-computation" in entry.rules


def test_a_reassociation_upstream_stays_flagged(tmp_path):
    entry = _entry(tmp_path, SAME_PORT, old=NEW, new="    y = x.to(tl.float32) * (a * b)")
    assert entry.verdict in FLAGGED, entry.reason
    assert "cosmetic-computation" not in entry.rules


def test_an_addition_of_values_that_may_be_tuples_stays_flagged(tmp_path):
    # Two parameters joined by `+` may be tuples (concatenation): their order is kept.
    entry = _entry(tmp_path, SAME_PORT, old="    y = ((x_ptr + a_ptr) + b) * a", new="    y = ((a_ptr + x_ptr) + b) * a")
    assert entry.verdict in FLAGGED, entry.reason
    assert "cosmetic-computation" not in entry.rules


def test_a_load_moved_across_a_store_upstream_stays_flagged(tmp_path):
    # Upstream now overwrites what it loaded into a before computing y from it: y may read the new value.
    old = "    y = (x.to(tl.float32) * a) * b\n    tl.store(a_ptr + offs, x, mask=live)"
    new = "    tl.store(a_ptr + offs, x, mask=live)\n    y = (x.to(tl.float32) * a) * b"
    entry = _entry(tmp_path, SAME_PORT, old=old, new=new)
    assert entry.verdict in FLAGGED, entry.reason
    assert "cosmetic-computation" not in entry.rules


def test_a_rewrite_beside_a_changed_autotune_space_stays_flagged(tmp_path):
    # The normal form keeps the decorators: the same computation timed over other configs is compared.
    def tuned(warps):
        return UPSTREAM.replace("@triton.jit", "@triton.autotune(configs=[triton.Config(dict(), num_warps=%d)], "
                                               "key=['n'])\n@triton.jit" % warps)
    tree = {**TREE, "kernels/scale.py": PORT.format(compute=SAME_PORT)}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scale.py": tuned(4).format(compute=NEW)}),
        CommitSpec("change", files={"ops/scale.py": tuned(8).format(compute="    y = b * (a * x.to(tl.float32))")}),
    ], tree, matrix=SCALE_MATRIX)
    assert "cosmetic-computation" not in verdicts[1].rules, verdicts[1].reason
