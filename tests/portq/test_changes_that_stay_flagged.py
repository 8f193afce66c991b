"""Changes to ported code that look harmless but that no rule may call
harmless from the text alone, so they stay flagged (NEEDS_REVIEW):

- a helper extracted from a ported definition, later wrapped in another
  memoisation (its carried statements moved into a nested function handed to
  a cache helper, its decorator swapped): the helper carries the port's code
  (rule ``moved-definition``) and what wraps it is new code around the
  port's statements, which a guard or a fix could equally be;
- a ported kernel calling a library function by another name
  (``make_fragment_like`` → ``make_rmem_tensor_like``): whether the new name
  is the old one's alias is a fact of a library the tree neither vendors nor
  pins;
- a name imported from another module path of such a library
  (``from dsl import Arch`` → ``from dsl.arch import Arch``): the two may
  bind different objects;
- a computation whose new form the port holds only with a subtraction's
  operands in the other order (``(w - z).to(tl.float32) * s``, the port
  ``s * (z - q).to(tl.float32)``): a product's operands may be swapped in a
  Triton kernel (``port-has-computed-change`` reads ``s * (q - z)...`` as the
  new form), a difference's may not;
- an additive mask whose bias goes from a large finite value to ``-inf``
  where the port adds the finite value: the two agree only where every row
  keeps a live key and no score comes near the bias, which no statement
  shows (the port holding ``-inf`` is IN_SYNC, ``port-has-renamed-change``);
- a mask that gains a condition on the rows (``rows[:, None] < n_rows``)
  where the port masks the keys only: that the extra rows are never stored
  is a reading of the whole kernel, not of the masked statement.
"""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, _symbol, norm_module

WRAPPER = '''\


def norm_forward(x, w):
    dtype, n_cols = x.dtype, x.shape[1]
    key = (dtype, n_cols)
    if key not in _PLANS:
        block = triton.next_power_of_2(n_cols)
        num_warps = 4 if block < 2048 else 8
        stages = 2 if dtype == torch.float32 else 3
        _PLANS[key] = (block, num_warps, stages)
    block, num_warps, stages = _PLANS[key]
    y = torch.empty_like(x)
    _norm_fwd[(x.shape[0],)](x, w, y, n_cols, BLOCK=block, num_warps=num_warps, num_stages=stages)
    return y


_PLANS = {}
'''

EXTRACTED = '''\


def norm_forward(x, w):
    dtype, n_cols = x.dtype, x.shape[1]
    block, num_warps, stages = _plan(dtype, n_cols)
    y = torch.empty_like(x)
    _norm_fwd[(x.shape[0],)](x, w, y, n_cols, BLOCK=block, num_warps=num_warps, num_stages=stages)
    return y


@lru_cache(maxsize=None)
def _plan(dtype, n_cols):
    block = triton.next_power_of_2(n_cols)
    num_warps = 4 if block < 2048 else 8
    stages = 2 if dtype == torch.float32 else 3
    return block, num_warps, stages
'''

CACHED = '''\


def norm_forward(x, w):
    dtype, n_cols = x.dtype, x.shape[1]
    block, num_warps, stages = _plan(dtype, n_cols)
    y = torch.empty_like(x)
    _norm_fwd[(x.shape[0],)](x, w, y, n_cols, BLOCK=block, num_warps=num_warps, num_stages=stages)
    return y


@disk_cache
def _plan(dtype, n_cols):
    def _compute():
        block = triton.next_power_of_2(n_cols)
        num_warps = 4 if block < 2048 else 8
        stages = 2 if dtype == torch.float32 else 3
        return block, num_warps, stages

    return cached(("plan", dtype, n_cols), _compute)
'''

PORTED_WRAPPER = '''\
import torch
import triton

from kernels.rownorm import row_norm_kernel

_PLANS = {}


# portq: ports vllm:ops/norm.py::norm_forward
def norm_forward(x, w):
    dtype, n_cols = x.dtype, x.shape[1]
    key = (dtype, n_cols)
    if key not in _PLANS:
        block = triton.next_power_of_2(n_cols)
        num_warps = 4 if block < 2048 else 8
        stages = 2 if dtype == torch.float32 else 3
        _PLANS[key] = (block, num_warps, stages)
    block, num_warps, stages = _PLANS[key]
    y = torch.empty_like(x)
    row_norm_kernel[(x.shape[0],)](x, w, y, n_cols, BLOCK=block, num_warps=num_warps, num_stages=stages)
    return y
'''


def test_a_new_memoisation_around_statements_extracted_from_a_ported_definition_stays_flagged(tmp_path):
    header = "from functools import lru_cache\n\nfrom cache import cached, disk_cache\n"
    tree = {**TREE, "kernels/forward.py": PORTED_WRAPPER,
            "engine/run.py": "from kernels.forward import norm_forward\n\n\ndef run(x, w):\n    return norm_forward(x, w)\n"}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": header + norm_module() + WRAPPER}),
        CommitSpec("plan in a cached helper", files={"ops/norm.py": header + norm_module() + EXTRACTED}),
        CommitSpec("cache plans on disk", files={"ops/norm.py": header + norm_module() + CACHED}),
    ], tree, matrix=MATRIX)
    helper = _symbol(verdicts[2], "_plan")
    assert helper.verdict in FLAGGED and "moved-definition" in helper.rules, helper.reason
    assert "norm_forward" in helper.reason
    assert verdicts[2].verdict in FLAGGED, verdicts[2].reason


LIBRARY_KERNEL = '''\
import dsl


def copy_rows(src, dst):
    fragment = dsl.make_fragment_like(src)
    dsl.copy(src, fragment)
    dsl.copy(fragment, dst)
'''

PORTED_LIBRARY_KERNEL = '''\
import dsl


# portq: ports vllm:ops/rows.py::copy_rows
def copy_rows(src, dst):
    fragment = dsl.make_fragment_like(src)
    dsl.copy(src, fragment)
    dsl.copy(fragment, dst)
'''

ROWS_MATRIX = MATRIX.replace('"ops/utils/*.py"]', '"ops/utils/*.py", "ops/rows.py"]')


def test_a_library_function_called_by_a_new_name_stays_flagged(tmp_path):
    tree = {**TREE, "kernels/rows.py": PORTED_LIBRARY_KERNEL,
            "engine/copy.py": "from kernels.rows import copy_rows\n\n\ndef run(a, b):\n    copy_rows(a, b)\n"}
    renamed = LIBRARY_KERNEL.replace("make_fragment_like", "make_rmem_tensor_like")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": LIBRARY_KERNEL}),
        CommitSpec("the DSL's new name", files={"ops/rows.py": renamed}),
    ], tree, matrix=ROWS_MATRIX)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason


def test_a_name_imported_from_another_module_path_of_a_library_stays_flagged(tmp_path):
    before = LIBRARY_KERNEL.replace("import dsl\n", "import dsl\nfrom dsl import Arch\n").replace(
        "    fragment =", "    assert Arch.current() >= 90\n    fragment =")
    after = before.replace("from dsl import Arch", "from dsl.arch import Arch")
    ported = PORTED_LIBRARY_KERNEL.replace("import dsl\n", "import dsl\nfrom dsl import Arch\n").replace(
        "    fragment =", "    assert Arch.current() >= 90\n    fragment =")
    tree = {**TREE, "kernels/rows.py": ported,
            "engine/copy.py": "from kernels.rows import copy_rows\n\n\ndef run(a, b):\n    copy_rows(a, b)\n"}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": before}),
        CommitSpec("import Arch from its module", files={"ops/rows.py": after}),
    ], tree, matrix=ROWS_MATRIX)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason


DEQUANT = '''\
import triton
import triton.language as tl


@triton.jit
def dequant_kernel(q_ptr, z_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    weights = tl.load(q_ptr + offs, mask=live, other=0)
    zeros = tl.load(z_ptr + offs, mask=live, other=0)
    scales = tl.load(s_ptr + offs, mask=live, other=0.0).to(tl.float32)
{dequantise}
    tl.store(out_ptr + offs, weights, mask=live)
'''

HALF = "    weights = weights - zeros\n    weights = weights.to(tl.float16)\n    weights = scales * weights"

PORTED_DEQUANT = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/dequant.py::dequant_kernel
@triton.jit
def unpack_kernel(packed_ptr, zero_ptr, scale_ptr, dst_ptr, total, TILE: tl.constexpr):
    flat = tl.program_id(0) * TILE + tl.arange(0, TILE)
    live = flat < total
    q = tl.load(packed_ptr + flat, mask=live, other=0)
    z = tl.load(zero_ptr + flat, mask=live, other=0)
    s = tl.load(scale_ptr + flat, mask=live, other=0.0).to(tl.float32)
    tl.store(dst_ptr + flat, {value}, mask=live)
'''

DEQUANT_MATRIX = MATRIX.replace('"ops/utils/*.py"]', '"ops/utils/*.py", "ops/dequant.py"]')


def test_a_computation_the_port_holds_with_a_products_operands_in_another_order_is_in_sync(tmp_path):
    # A product's operands swapped and three single-use statements written as one value compute the same
    # bits in a Triton kernel: the port already has the change.
    tree = {**TREE, "kernels/dequant.py": PORTED_DEQUANT.format(value="s * (q - z).to(tl.float32)")}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/dequant.py": DEQUANT.format(dequantise=HALF)}),
        CommitSpec("back to fp32", files={"ops/dequant.py": DEQUANT.format(
            dequantise="    weights = (weights - zeros).to(tl.float32) * scales")}),
    ], tree, matrix=DEQUANT_MATRIX)
    assert verdicts[1].verdict == IN_SYNC, verdicts[1].reason
    assert "port-has-computed-change" in verdicts[1].rules


def test_a_computation_the_port_holds_only_with_a_subtractions_operands_swapped_stays_flagged(tmp_path):
    tree = {**TREE, "kernels/dequant.py": PORTED_DEQUANT.format(value="s * (z - q).to(tl.float32)")}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/dequant.py": DEQUANT.format(dequantise=HALF)}),
        CommitSpec("back to fp32", files={"ops/dequant.py": DEQUANT.format(
            dequantise="    weights = (weights - zeros).to(tl.float32) * scales")}),
    ], tree, matrix=DEQUANT_MATRIX)
    assert verdicts[1].verdict in FLAGGED and verdicts[1].verdict != IN_SYNC, verdicts[1].reason


SCAN = '''\
import triton
import triton.language as tl


@triton.jit
def scan_kernel(q_ptr, k_ptr, out_ptr, n_rows, n_keys, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    live = cols < n_keys
    q = tl.load(q_ptr + rows, mask=rows < n_rows, other=0.0)
    k = tl.load(k_ptr + cols, mask=live, other=0.0)
    s = q[:, None] * k[None, :]
{mask}
    m = tl.max(masked, 1)
    p = tl.math.exp2(masked - m[:, None])
    tl.store(out_ptr + rows, tl.sum(p, 1), mask=rows < n_rows)
'''

PORTED_SCAN = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/scan.py::scan_kernel
@triton.jit
def keys_kernel(a_ptr, b_ptr, dst_ptr, rows_total, keys_total, TILE: tl.constexpr):
    r = tl.arange(0, TILE)
    c = tl.arange(0, TILE)
    key_ok = c < keys_total
    a = tl.load(a_ptr + r, mask=r < rows_total, other=0.0)
    b = tl.load(b_ptr + c, mask=key_ok, other=0.0)
    t = a[:, None] * b[None, :]
{mask}
    top = tl.max(u, 1)
    e = tl.math.exp2(u - top[:, None])
    tl.store(dst_ptr + r, tl.sum(e, 1), mask=r < rows_total)
'''

SCAN_MATRIX = MATRIX.replace('"ops/utils/*.py"]', '"ops/utils/*.py", "ops/scan.py"]')
FINITE_BIAS = "    masked = s + tl.where(live[None, :], 0.0, -1.0e6)"
INF_BIAS = "    masked = s + tl.where(live[None, :], 0.0, float(\"-inf\"))"
KEYS_ONLY = "    masked = tl.where(live[None, :], s, float(\"-inf\"))"
ROWS_AND_KEYS = "    masked = tl.where((rows[:, None] < n_rows) & live[None, :], s, float(\"-inf\"))"


def _scan_history(tmp_path, old, new, port_mask):
    tree = {**TREE, "kernels/keys.py": PORTED_SCAN.format(mask=port_mask)}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scan.py": SCAN.format(mask=old)}),
        CommitSpec("mask the tail", files={"ops/scan.py": SCAN.format(mask=new)}),
    ], tree, matrix=SCAN_MATRIX)
    return verdicts[1]


def test_a_mask_bias_the_port_already_holds_as_negative_infinity_is_in_sync(tmp_path):
    entry = _scan_history(tmp_path, FINITE_BIAS, INF_BIAS,
                          "    u = t + tl.where(key_ok[None, :], 0.0, float(\"-inf\"))")
    assert entry.verdict == IN_SYNC, entry.reason
    assert "port-has-renamed-change" in entry.rules, entry.rules


def test_a_mask_bias_made_negative_infinity_where_the_port_keeps_the_finite_bias_stays_flagged(tmp_path):
    # The port adds the large finite bias upstream just replaced: equal only where a row keeps a live key and
    # no score comes near the bias, which the text does not show.
    entry = _scan_history(tmp_path, FINITE_BIAS, INF_BIAS,
                          "    u = t + tl.where(key_ok[None, :], 0.0, -1.0e6)")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason


def test_a_mask_gaining_a_row_condition_the_port_lacks_stays_flagged(tmp_path):
    # Masking the rows past the query length changes only rows the store drops, but that is a reading of the
    # whole kernel, not of the masked statement: the port's condition is upstream's old one.
    entry = _scan_history(tmp_path, KEYS_ONLY, ROWS_AND_KEYS,
                          "    u = tl.where(key_ok[None, :], t, float(\"-inf\"))")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason
