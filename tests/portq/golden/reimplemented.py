"""Sources for the re-implemented-port cases (issue 16, docs/tricky-cases.md
cases 20-27): upstream C++/CUDA or Triton before and after one commit, and
in-tree ports written differently from upstream (other local names, other
helpers, other languages)."""

CU = "csrc/cache_kernels.cu"

# --- case 2: a launch grid compared modulo naming ----------------------------------

GRID_BEFORE = """\
#include <torch/all.h>

namespace vllm {
__global__ void copy_rows_kernel(const float* __restrict__ src, float* __restrict__ dst, const int64_t n) {
  for (int64_t i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256) dst[i] = src[i];
}
}  // namespace vllm

void copy_rows(torch::Tensor const& src, torch::Tensor& dst, int64_t n) {
  dim3 grid((n + 255) / 256);
  dim3 block(256);
  vllm::copy_rows_kernel<<<grid, block, 0, stream>>>(src.data_ptr<float>(), dst.data_ptr<float>(), n);
}
"""

GRID_AFTER = GRID_BEFORE.replace(
    "  dim3 grid((n + 255) / 256);",
    "  const int num_sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;\n"
    "  dim3 grid(std::min((n + 255) / 256, 4 * num_sms));")

GRID_PORT = '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:csrc/cache_kernels.cu::vllm::copy_rows_kernel
@triton.jit
def _copy_rows(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < n), mask=offsets < n)


# portq: ports vllm:csrc/cache_kernels.cu::copy_rows
def copy_rows(src, dst, n):
{body}
    _copy_rows[grid](src, dst, n, BLOCK=256)
'''

GRID_PORT_NEW = """\
    {sms} = torch.cuda.get_device_properties(src.device).multi_processor_count
    grid = (min(triton.cdiv(n, 256), 4 * {sms}),)"""
GRID_PORT_OLD = "    grid = (triton.cdiv(n, 256),)"

GRID_CALLER = '''\
from portq_kernels.kv_cache.copy import copy_rows


def stage(src, dst):
    copy_rows(src, dst, src.numel())
'''


def grid_tree(body: str) -> dict[str, str]:
    return {"kernels/kv_cache/copy.py": GRID_PORT.format(body=body),
            "kernels/mla_prefill/stage.py": GRID_CALLER}


# --- case 7: seed 000's shape in a C++ port: geometry through locals, kernel renamed ---

CPP_WRAPPER_HEAD = r'''// portq: ports vllm:csrc/cache_kernels.cu::gather_and_maybe_dequant_cache
void gather_and_maybe_dequant_cache(torch::Tensor const& src_cache, torch::Tensor const& dst,
                                    torch::Tensor const& block_table, torch::Tensor const& cu_seq_lens,
                                    torch::Tensor const& token_to_seq, int64_t num_tokens,
                                    const std::string& kv_cache_dtype, torch::Tensor const& scale,
                                    std::optional<torch::Tensor> seq_starts = std::nullopt) {
'''

SEED_CPP_PORT = r'''#include <torch/all.h>

namespace port {

// portq: ports vllm:csrc/cache_kernels.cu::vllm::gather_and_maybe_dequant_cache
template <typename scalar_t, int ENTRY_SIZE, int CTA_SIZE>
__global__ void GatherKernel(const scalar_t* __restrict__ src_cache, scalar_t* __restrict__ dst,
                             const int32_t* __restrict__ block_table, const int32_t* __restrict__ cu_seq_lens,
                             const int32_t* __restrict__ token_to_seq, const int32_t num_tokens,
                             const int32_t block_size, const int32_t* __restrict__ seq_starts) {
  const int token_id = blockIdx.x;
  if (token_id >= num_tokens) return;
  const int batch_id = token_to_seq[token_id];
  const int offset = token_id - cu_seq_lens[batch_id] + (seq_starts ? seq_starts[batch_id] : 0);
  const int block = block_table[batch_id * 64 + offset / block_size];
  for (int i = threadIdx.x; i < ENTRY_SIZE; i += CTA_SIZE) {
    dst[token_id * ENTRY_SIZE + i] = src_cache[(block * block_size + offset % block_size) * ENTRY_SIZE + i];
  }
}

}  // namespace port

''' + CPP_WRAPPER_HEAD + r'''  const int threads = 64;
  const int32_t block_size = src_cache.size(1);
  const unsigned grid = static_cast<unsigned>(num_tokens);
  port::GatherKernel<float, 576, 64><<<grid, threads, 0, stream>>>(
      src_cache.data_ptr<float>(), dst.data_ptr<float>(), block_table.data_ptr<int32_t>(),
      cu_seq_lens.data_ptr<int32_t>(), token_to_seq.data_ptr<int32_t>(), num_tokens, block_size,
      seq_starts.has_value() ? seq_starts->data_ptr<int32_t>() : nullptr);
}
'''

SEED_CPP_CALLER = '''#include <torch/all.h>

void prefill_chunk(torch::Tensor cache, torch::Tensor ws, torch::Tensor bt, torch::Tensor lens, torch::Tensor map,
                   int64_t n, torch::Tensor scale) {
  gather_and_maybe_dequant_cache(cache, ws, bt, lens, map, n, "auto", scale);
}
'''

SEED_CPP_TREE = {"kernels/kv_cache/gather.cu": SEED_CPP_PORT, "kernels/mla_prefill/prefill.cu": SEED_CPP_CALLER}


# --- case 6: every change inside a surface the tree declares not carried ---------------

SCOPE_HOST = "aiter/ops/triton/gather_kv_b_proj.py"
SCOPE_BEFORE = '''from aiter.ops.triton._triton_kernels.gather_kv_b_proj import _triton_gather_kv_b_proj


def gather_kv_b_proj(k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix, weight_preshuffle=False):
    num_block, block_size, hidden_dim = k_buffer.shape
    batch_size = kv_indptr.shape[0] - 1
    if k_buffer.dtype.itemsize == 1:
        chunk = 32
    else:
        chunk = 16
    grid = (batch_size * k_prefix.shape[1],)
    _triton_gather_kv_b_proj[grid](
        batch_size, k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix,
        ChunkK=chunk, WEIGHT_PRESHUFFLE=weight_preshuffle,
    )
'''
SCOPE_AFTER = SCOPE_BEFORE.replace(
    "weight_preshuffle=False):", "weight_preshuffle=False,\n                     shuffled_kv_cache=False):").replace(
    "    if k_buffer.dtype.itemsize == 1:", "    if shuffled_kv_cache:\n        assert block_size % 16 == 0\n"
    "        chunk = block_size\n    elif k_buffer.dtype.itemsize == 1:").replace(
    "WEIGHT_PRESHUFFLE=weight_preshuffle,", "WEIGHT_PRESHUFFLE=weight_preshuffle, SHUFFLED_KV_CACHE=shuffled_kv_cache,")


def scope_tree(declared: bool) -> dict[str, str]:
    declaration = (f"# portq: not-carried vllm:{SCOPE_HOST}::gather_kv_b_proj[shuffled_kv_cache] -- AMD-only layout\n"
                   if declared else "")
    return {
        "kernels/mla_prefix/op.py": f'''import triton


@triton.jit
def _expand(k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix, BLOCK_N):
    pass


# portq: ports vllm:{SCOPE_HOST}::gather_kv_b_proj
{declaration}def gather_kv_b_proj(k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix):
    tiles = k_prefix.shape[0] * k_prefix.shape[1]
    _expand[(tiles,)](k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix, BLOCK_N=128)
''',
        "kernels/mla_prefill/caller.py": "from portq_kernels.mla_prefix.op import gather_kv_b_proj\n\n\n"
                                         "def expand(*args):\n    return gather_kv_b_proj(*args)\n",
    }


# --- case 3: a new upstream kernel the tree already anchors: the claim is computed ------

FLAT_KERNEL = "aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"
FLAT_BEFORE = '''import triton
import triton.language as tl


@triton.jit
def _triton_gather_kv_b_proj(batch_size, k_buffer, kv_indptr, k_prefix, v_prefix, ChunkK: tl.constexpr):
    pid = tl.program_id(0)
'''
FLAT_AFTER = FLAT_BEFORE + '''

@triton.jit
def _triton_gather_kv_b_proj_flat(total_kv, k_buffer, kv_indices, k_prefix, v_prefix, TpNumHeads: tl.constexpr,
                                  ChunkK: tl.constexpr, PaddedK: tl.constexpr, PaddedV: tl.constexpr,
                                  GRID_STRIDE: tl.constexpr = False):
    flat_pid = tl.program_id(0)
    pid_head = flat_pid % TpNumHeads
'''
FLAT_TREE = {"kernels/mla_prefix/op.py": f'''import triton
import triton.language as tl


# portq: ports vllm:{FLAT_KERNEL}::_triton_gather_kv_b_proj
# portq: ports vllm:{FLAT_KERNEL}::_triton_gather_kv_b_proj_flat
@triton.jit
def _expand(total_kv, k_buffer, kv_indices, k_prefix, v_prefix, batch_size, kv_indptr, TpNumHeads,
            ChunkK: tl.constexpr, BLOCK_N: tl.constexpr, GRID_STRIDE: tl.constexpr):
    pass
'''}


# --- case 5: broken syntax inside a ported C++ function --------------------------------

BROKEN_AFTER = GRID_BEFORE.replace(
    "  dim3 block(256);\n", "  dim3 block(256);\n  }}}} ((( template <<< int x = ;;\n")


# --- case 6b: a kernel turned dispatcher, its new path in a helper declared not carried ---

_WORK_INDEX_BODY = """\
    pid = tl.program_id(0)
    pid_batch = pid // TpNumHeads
    pid_head = pid % TpNumHeads
    tl.store(k_prefix + pid_batch * TpNumHeads + pid_head, tl.load(k_buffer + pid_batch))
"""
DISPATCH_BEFORE = '''import triton
import triton.language as tl


@triton.jit
def _triton_gather_kv_b_proj(batch_size, k_buffer, k_prefix, TpNumHeads: tl.constexpr, ChunkK: tl.constexpr):
''' + _WORK_INDEX_BODY
DISPATCH_AFTER = '''import triton
import triton.language as tl


@triton.jit
def _fp4_impl(batch_size, k_buffer, k_prefix, TpNumHeads: tl.constexpr, ChunkK: tl.constexpr):
    flat_pid = tl.program_id(0)
    num_batch_heads = batch_size * TpNumHeads
    pid = flat_pid % num_batch_heads
    chunk_id = flat_pid // num_batch_heads
    tl.store(k_prefix + pid * ChunkK + chunk_id, tl.load(k_buffer + pid))


@triton.jit
def _impl(batch_size, k_buffer, k_prefix, TpNumHeads: tl.constexpr, ChunkK: tl.constexpr):
''' + _WORK_INDEX_BODY + '''

@triton.jit
def _triton_gather_kv_b_proj(batch_size, k_buffer, k_prefix, TpNumHeads: tl.constexpr, ChunkK: tl.constexpr,
                             IS_FP4: tl.constexpr = False):
    if IS_FP4:
        _fp4_impl(batch_size, k_buffer, k_prefix, TpNumHeads, ChunkK)
    else:
        _impl(batch_size, k_buffer, k_prefix, TpNumHeads, ChunkK)
'''


def dispatch_tree() -> dict[str, str]:
    return {"kernels/mla_prefix/op.py": f'''import triton
import triton.language as tl


# portq: ports vllm:{FLAT_KERNEL}::_triton_gather_kv_b_proj
# portq: ports vllm:{FLAT_KERNEL}::_impl
# portq: not-carried vllm:{FLAT_KERNEL}::_triton_gather_kv_b_proj[IS_FP4] -- MXFP4 not carried
# portq: not-carried vllm:{FLAT_KERNEL}::_fp4_impl -- MXFP4 not carried
@triton.jit
def _expand(batch_size, k_buffer, k_prefix, TpNumHeads, BLOCK_N: tl.constexpr):
    item = tl.program_id(0)
    row_tile = item // TpNumHeads
    head = item % TpNumHeads
    tl.store(k_prefix + row_tile + head, tl.load(k_buffer + row_tile))
'''}


# --- case 1b: offsets computed from a program-id value are not a decomposition ---------

OFFSET_AFTER = DISPATCH_BEFORE.replace(
    "    tl.store(k_prefix", "    scale_row = pid_head * 2 * ChunkK // 128\n    tl.store(k_prefix + scale_row")
OFFSET_TREE = {"kernels/mla_prefix/op.py": dispatch_tree()["kernels/mla_prefix/op.py"].replace(
    "# portq: ports vllm:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_impl\n", "")}


# --- case 8: a C++ template parameter against tl.constexpr ---------------------------------

TEMPLATE_BEFORE = GRID_BEFORE
TEMPLATE_AFTER = GRID_BEFORE.replace(
    "__global__ void copy_rows_kernel(", "template <int BLOCK_STRIDE_ROWS>\n__global__ void copy_rows_kernel(").replace(
    "vllm::copy_rows_kernel<<<", "vllm::copy_rows_kernel<4><<<")


def template_tree(constexpr: str) -> dict[str, str]:
    tree = grid_tree(GRID_PORT_OLD)
    tree["kernels/kv_cache/copy.py"] = tree["kernels/kv_cache/copy.py"].replace(
        "def _copy_rows(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):",
        f"def _copy_rows(src_ptr, dst_ptr, n, BLOCK: tl.constexpr{constexpr}):")
    return tree


# --- case 28: the port's grid computed in a helper imported from its package -----------

def imported_grid_tree() -> dict[str, str]:
    from tests.portq.golden import seed000
    port = seed000.SYNCED_PORT.replace(
        "import triton.language as tl\n", "import triton.language as tl\n\nfrom ._grid import page_task_grid\n", 1).replace(
        "    grid = (triton.cdiv(num_tokens, block_size) + 2 * num_reqs,)\n",
        "    grid = page_task_grid(num_tokens, src_cache, cu_seq_lens)\n")
    helper = ('import triton\n\n\ndef page_task_grid(tokens, cache, starts):\n'
              '    """ceil(T / B) + 2 R programs."""\n'
              '    return (triton.cdiv(tokens, cache.shape[1]) + 2 * (starts.shape[0] - 1),)\n')
    return {**seed000.SYNCED_TREE, "kernels/kv_cache/gather.py": port, "kernels/kv_cache/_grid.py": helper}


# --- case 3b: a top-level C++ change belongs to the ported symbols that use what it defines ---

MACRO_BEFORE = """\
#include <torch/all.h>

#define CALL_SIBLING(T) vllm::sibling_kernel<T><<<grid, block>>>(src_cache.data_ptr<T>(), dst.data_ptr<T>())
#define GATHER_TILE 64

namespace vllm {
__global__ void gather_rows_kernel(const float* __restrict__ src_cache, float* __restrict__ dst, const int64_t n) {
  for (int64_t i = threadIdx.x; i < n; i += GATHER_TILE) dst[i] = src_cache[i];
}
}  // namespace vllm
"""
MACRO_SIBLING_AFTER = MACRO_BEFORE.replace("<<<grid, block>>>", "<<<grid, block, 0, stream>>>")
MACRO_USED_AFTER = MACRO_BEFORE.replace("#define GATHER_TILE 64", "#define GATHER_TILE 128")
MACRO_TREE = {"kernels/kv_cache/rows.py": '''import triton
import triton.language as tl


# portq: ports vllm:csrc/cache_kernels.cu::vllm::gather_rows_kernel
@triton.jit
def _gather_rows(src_cache_ptr, dst_ptr, n, TILE: tl.constexpr):
    offsets = tl.arange(0, TILE)
    tl.store(dst_ptr + offsets, tl.load(src_cache_ptr + offsets, mask=offsets < n), mask=offsets < n)
'''}


# --- case 28b: a C++ port's grid computed in an included header -------------------------

SYNCED_CPP_PORT = r'''#include <torch/all.h>
#include "launch_geometry.cuh"

namespace port {

// portq: ports vllm:csrc/cache_kernels.cu::vllm::gather_and_maybe_dequant_cache_page
template <typename scalar_t, int ENTRY_SIZE>
__global__ void GatherPageKernel(const scalar_t* __restrict__ src_cache, scalar_t* __restrict__ dst,
                                 const int32_t* __restrict__ block_table, const int32_t* __restrict__ cu_seq_lens,
                                 const int32_t num_reqs, const int32_t num_tokens, const int32_t block_size,
                                 const int32_t* __restrict__ seq_starts) {
  const int task = blockIdx.x;
  if (task >= num_tokens) return;
  dst[task] = src_cache[block_table[task % num_reqs] * block_size + (seq_starts ? seq_starts[0] : 0)];
}

}  // namespace port

''' + CPP_WRAPPER_HEAD + r'''  (void)token_to_seq;
  const int32_t block_size = src_cache.size(1);
  const int32_t requests = cu_seq_lens.size(0) - 1;
  const unsigned grid = port::page_task_grid(num_tokens, block_size, requests);
  const int threads = num_tokens >= (1 << 20) ? 128 : 256;
  port::GatherPageKernel<float, 576><<<grid, threads, 0, stream>>>(
      src_cache.data_ptr<float>(), dst.data_ptr<float>(), block_table.data_ptr<int32_t>(),
      cu_seq_lens.data_ptr<int32_t>(), requests, num_tokens, block_size,
      seq_starts.has_value() ? seq_starts->data_ptr<int32_t>() : nullptr);
}
'''

LAUNCH_GEOMETRY_HEADER = '''#pragma once
namespace port {
inline unsigned page_task_grid(int64_t tokens, int32_t page, int32_t reqs) {
  return static_cast<unsigned>((tokens + page - 1) / page + 2 * reqs);
}
}  // namespace port
'''

SYNCED_CPP_TREE = {"kernels/kv_cache/gather.cu": SYNCED_CPP_PORT,
                   "kernels/kv_cache/launch_geometry.cuh": LAUNCH_GEOMETRY_HEADER,
                   "kernels/mla_prefill/prefill.cu": SEED_CPP_CALLER}


# --- case 31: a program-id decomposition compared through the port's bindings ----------

PACKED_BEFORE = '''import triton
import triton.language as tl


@triton.jit
def _expand_kernel(x_ptr, out_ptr, H, C, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // H
    h = pid % H
    tl.store(out_ptr + b * H + h, tl.load(x_ptr + b))
'''
PACKED_AFTER = PACKED_BEFORE.replace("    b = pid // H\n    h = pid % H\n",
                                     "    b = pid // (H * C)\n    h = pid % (H * C)\n")
PACKED_TREE = {"kernels/mla_prefix/packed.py": '''import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_expand_kernel
@triton.jit
def _expand(x_ptr, out_ptr, H, C, BLOCK: tl.constexpr):
    item = tl.program_id(0)
    per_row = C * H
    row = item // per_row
    col = item % per_row
    tl.store(out_ptr + row + col, tl.load(x_ptr + row))
'''}


# --- case 32: a local assigned more than once resolves to the assignment that reaches the use ---

REASSIGNED_HOST = "vllm/ops/rows.py"
_REASSIGNED_HEAD = """import triton
from vllm.ops._rows import _rows_kernel


def copy_rows(x, y, n, fast):
"""
REASSIGNED_BEFORE = _REASSIGNED_HEAD + """\
    grid = (triton.cdiv(n, 64),)
    _rows_kernel[grid](x, y, n, BLOCK=64)
"""
REASSIGNED_AFTER = _REASSIGNED_HEAD + """\
    if fast:
        grid = (triton.cdiv(n, 256),)
        _rows_kernel[grid](x, y, n, BLOCK=256)
        return
    grid = (triton.cdiv(n, 64),)
    _rows_kernel[grid](x, y, n, BLOCK=64)
"""
REASSIGNED_BRANCHES_AFTER = _REASSIGNED_HEAD + """\
    if fast:
        grid = (triton.cdiv(n, 256),)
    else:
        grid = (triton.cdiv(n, 64),)
    _rows_kernel[grid](x, y, n, BLOCK=64)
"""
REASSIGNED_TREE = {"kernels/kv_cache/rows.py": f'''import triton
import triton.language as tl


@triton.jit
def _rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pass


# portq: ports vllm:{REASSIGNED_HOST}::copy_rows
def copy_rows(x, y, n):
    grid = (triton.cdiv(n, 64),)
    _rows[grid](x, y, n, BLOCK=64)
''', "kernels/mla_prefill/stage.py": '''from portq_kernels.kv_cache.rows import copy_rows


def stage(x, y):
    copy_rows(x, y, x.numel())
'''}


# a launch in a helper the ported host calls from two places, its grid read through the helper's parameter:
# a new call passing another value leaves the old call, and the old grid, on the other path
CALLED_TWICE_HOST = "vllm/ops/rows.py"
_CALLED_TWICE_HEAD = """import triton
from vllm.ops._rows import _rows_kernel


def _launch_rows(x, y):
    n = x.shape[0]
    _rows_kernel[(n,)](x, y, n)
    return y


"""
CALLED_TWICE_BEFORE = _CALLED_TWICE_HEAD + """\
def copy_rows(x, y):
    return _launch_rows(x, y)
"""
CALLED_TWICE_AFTER = _CALLED_TWICE_HEAD + """\
def copy_rows(x, y):
    if isinstance(x, ShardedRows):
        return _launch_rows(x.local_rows(), y)
    return _launch_rows(x, y)
"""
# the neighbour that stays a gap: the one call now passes another value, so every path has the new grid
CALLED_ONCE_CHANGED_AFTER = _CALLED_TWICE_HEAD + """\
def copy_rows(x, y):
    return _launch_rows(x.local_rows(), y)
"""
CALLED_TWICE_TREE = {"kernels/kv_cache/rows.py": f'''import triton
import triton.language as tl


@triton.jit
def _rows(x_ptr, y_ptr, n):
    pass


# portq: ports vllm:{CALLED_TWICE_HOST}::copy_rows
def copy_rows(x, y):
    _rows[(x.shape[0],)](x, y, x.shape[0])
    return y
''', "kernels/mla_prefill/stage.py": '''from portq_kernels.kv_cache.rows import copy_rows


def stage(x, y):
    return copy_rows(x, y)
'''}


# a Triton grid that changes only through the local it is computed from: the grid line reads the same
BOUND_ROWS_BEFORE = _REASSIGNED_HEAD + """\
    rows = n
    grid = (triton.cdiv(rows, 64),)
    _rows_kernel[grid](x, y, n, BLOCK=64)
"""
BOUND_ROWS_AFTER = BOUND_ROWS_BEFORE.replace("    rows = n\n", "    rows = min(n, x.shape[0])\n")
# num_warps through a local, changed with the launch line unchanged
WARPS_BEFORE = _REASSIGNED_HEAD + """\
    warps = 4
    grid = (triton.cdiv(n, 64),)
    _rows_kernel[grid](x, y, n, BLOCK=64, num_warps=warps)
"""
WARPS_AFTER = WARPS_BEFORE.replace("    warps = 4\n", "    warps = 8\n")
WARPS_TREE = {**REASSIGNED_TREE, "kernels/kv_cache/rows.py": REASSIGNED_TREE["kernels/kv_cache/rows.py"].replace(
    "_rows[grid](x, y, n, BLOCK=64)", "_rows[grid](x, y, n, BLOCK=64, num_warps=4)")}

# --- case 33: a grid helper with several returns; a new kernel the port already launches ---

GRID_HELPER_PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:csrc/cache_kernels.cu::vllm::copy_rows_kernel
@triton.jit
def _copy_rows(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pass


def rows_grid(n, device):
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    if n < 256:
        return (min((n + 255) // 256, sms * 4),)
    return ({second},)


# portq: ports vllm:csrc/cache_kernels.cu::copy_rows
def copy_rows(src, dst, n):
    _copy_rows[rows_grid(n, src.device)](src, dst, n, BLOCK=256)
'''


def grid_helper_tree(second: str) -> dict[str, str]:
    return {"kernels/kv_cache/copy.py": GRID_HELPER_PORT.format(second=second),
            "kernels/mla_prefill/stage.py": GRID_CALLER}


FLAT_HOST = "vllm/ops/rows.py"
FLAT_HOST_BEFORE = REASSIGNED_BEFORE
FLAT_HOST_AFTER = '''import triton
from vllm.ops._rows import _rows_kernel, _rows_flat_kernel


def copy_rows(x, y, n, fast):
    if n < 4096:
        _rows_flat_kernel[({flat_grid},)](x, y, n, BLOCK=64)
        return
    grid = (triton.cdiv(n, 64),)
    _rows_kernel[grid](x, y, n, BLOCK=64)
'''
FLAT_HOST_TREE = {"kernels/kv_cache/rows.py": REASSIGNED_TREE["kernels/kv_cache/rows.py"].replace(
    "@triton.jit\ndef _rows(",
    f"# portq: ports vllm:{FLAT_HOST}::_rows_kernel\n# portq: ports vllm:{FLAT_HOST}::_rows_flat_kernel\n"
    "@triton.jit\ndef _rows("), "kernels/mla_prefill/stage.py": REASSIGNED_TREE["kernels/mla_prefill/stage.py"]}


# --- case 34: a kernel body moved into a helper with one local written in place ---

_MOVED_SIGNATURE = "(batch_size, k_buffer, k_prefix, TpNumHeads: tl.constexpr, ChunkK: tl.constexpr"
MOVED_BEFORE = f'''import triton
import triton.language as tl


@triton.jit
def _triton_gather_kv_b_proj{_MOVED_SIGNATURE}):
    pid = tl.program_id(0)
    chunks = (batch_size + 1) // 2
    for chunk in range(chunks):
        tl.store(k_prefix + pid * ChunkK + chunk, tl.load(k_buffer + pid))
'''
MOVED_AFTER = f'''import triton
import triton.language as tl


@triton.jit
def _fp4_impl{_MOVED_SIGNATURE}):
    tl.store(k_prefix, tl.load(k_buffer))


@triton.jit
def _impl{_MOVED_SIGNATURE}):
    pid = tl.program_id(0)
    for chunk in range((batch_size + 1) // 2):
        tl.store(k_prefix + pid * ChunkK + chunk, tl.load(k_buffer + pid))


@triton.jit
def _triton_gather_kv_b_proj{_MOVED_SIGNATURE},
                             IS_FP4: tl.constexpr = False):
    if IS_FP4:
        _fp4_impl(batch_size, k_buffer, k_prefix, TpNumHeads, ChunkK)
    else:
        _impl(batch_size, k_buffer, k_prefix, TpNumHeads, ChunkK)
'''


# --- case 35: a wrapper dispatching on a local that selects only a declared path (aiter ede316568a) ---

FP4_HOST_BEFORE = SCOPE_BEFORE.replace(
    "    batch_size = kv_indptr.shape[0] - 1\n",
    "    batch_size = kv_indptr.shape[0] - 1\n    weight_n, weight_k = kv_proj_weight.shape\n").replace(
    "ChunkK=chunk,", "KV_CDim=weight_k, ChunkK=chunk,")
FP4_HOST_AFTER = FP4_HOST_BEFORE.replace(
    "    weight_n, weight_k = kv_proj_weight.shape\n",
    "    weight_n, packed_weight_k = kv_proj_weight.shape\n"
    "    fp4_dtype = getattr(torch, \"float4_e2m1fn_x2\", None)\n"
    "    is_fp4_weight = fp4_dtype is not None and kv_proj_weight.dtype == fp4_dtype\n"
    "    weight_k = packed_weight_k * 2 if is_fp4_weight else packed_weight_k\n").replace(
    "    if k_buffer.dtype.itemsize == 1:", "    if is_fp4_weight:\n        chunk = 64\n    elif k_buffer.dtype.itemsize == 1:").replace(
    "    _triton_gather_kv_b_proj[grid](\n",
    "    if is_fp4_weight:\n"
    "        _triton_gather_kv_b_proj[(batch_size * k_prefix.shape[1] * 4,)](\n"
    "            batch_size, k_buffer, kv_indptr, kv_proj_weight, k_prefix, v_prefix,\n"
    "            KV_CDim=weight_k, ChunkK=chunk, IS_FP4=True,\n"
    "        )\n"
    "        return\n"
    "    _triton_gather_kv_b_proj[grid](\n").replace(
    "WEIGHT_PRESHUFFLE=weight_preshuffle,", "WEIGHT_PRESHUFFLE=weight_preshuffle, IS_FP4=False,")


def fp4_tree(declared: bool) -> dict[str, str]:
    tree = scope_tree(False)
    declaration = (f"# portq: not-carried vllm:{FLAT_KERNEL}::_triton_gather_kv_b_proj[IS_FP4] -- MXFP4 not carried\n"
                   if declared else "")
    tree["kernels/mla_prefix/op.py"] = tree["kernels/mla_prefix/op.py"].replace(
        f"# portq: ports vllm:{SCOPE_HOST}::gather_kv_b_proj\n",
        f"# portq: ports vllm:{SCOPE_HOST}::gather_kv_b_proj\n{declaration}")
    return tree
# --- a constexpr a @triton.heuristics decorator derives from the kernel's own arguments ---

HEURISTIC_KERNEL = "aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16w16.py"
HEURISTIC_BEFORE = '''import triton
import triton.language as tl


@triton.heuristics(
    {{
        "EVEN_K": lambda args: args["K"] % args["BLOCK_SIZE_K"] == 0,{extra}
    }}
)
@triton.jit
def _gemm_kernel(a_ptr, c_ptr, M, N, K, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                 BLOCK_SIZE_K: tl.constexpr, EVEN_K: tl.constexpr{param}):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    tl.store(c_ptr + offs, tl.load(a_ptr + offs))
'''
EVEN_MN_LAMBDA = '''
        "EVEN_MN": lambda args: (args["M"] % args["BLOCK_SIZE_M"] == 0) and (args["N"] % args["BLOCK_SIZE_N"] == 0),'''
GRID_MN_LAMBDA = '''
        "GRID_MN": lambda args: triton.cdiv(args["M"], args["BLOCK_SIZE_M"]) * triton.cdiv(args["N"], args["BLOCK_SIZE_N"]),'''
OUTSIDE_LAMBDA = '''
        "EVEN_MN": lambda args: TUNED[args["M"]],'''

ROUNDED_M_LAMBDA = '''
        "ROUNDED_M": lambda args: 2 ** int(math.ceil(math.log2(args["M"]))),'''
PICKED_M_LAMBDA = '''
        "ROUNDED_M": lambda args: tuning.pick(args["M"]),'''


def keyword_heuristic(source: str) -> str:
    """``source`` with its ``@triton.heuristics`` table passed as the ``values=`` keyword."""
    return source.replace("@triton.heuristics(\n    {", "@triton.heuristics(\n    values={", 1)


def heuristic_kernel(extra: str = "", param: str = "") -> str:
    return HEURISTIC_BEFORE.format(extra=extra, param=f", {param}: tl.constexpr" if param else "")


def heuristic_tree(param: str = "") -> dict[str, str]:
    """A copied port of ``_gemm_kernel``, with or without ``param``."""
    anchor = f"\n\n# portq: ports vllm:{HEURISTIC_KERNEL}::_gemm_kernel\n@triton.heuristics("
    caller = ("import triton\n\nfrom portq_kernels.kv_cache.gemm import _gemm_kernel\n\n\n"
              "def gemm(a, c, M, N, K):\n"
              "    _gemm_kernel[(triton.cdiv(M, 64),)](a, c, M, N, K, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32)\n")
    return {"kernels/kv_cache/gemm.py": heuristic_kernel(param=param).replace("\n\n\n@triton.heuristics(", anchor, 1),
            "kernels/mla_prefill/gemm_stage.py": caller}


# --- a kernel replaced at the same launch site, the same grid and inputs (aiter 8ad75337ed) ---

SWAP_HOST = "aiter/ops/triton/gemm/basic/gemm_a16w16.py"
SWAP_BEFORE = '''import triton

from aiter.ops.triton._triton_kernels.gemm.basic.gemm_a16w16 import _reduce_kernel


def gemm_reduce(y_pp, y, bias, M, N):
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    _reduce_kernel[grid](bias, y_pp, y, M, N, 64, 64, ADD_BIAS=(bias is not None))
    return y
'''
SWAP_AFTER = SWAP_BEFORE.replace("import _reduce_kernel", "import _splitk_reduce_kernel").replace(
    "_reduce_kernel[grid](bias, y_pp, y, M, N, 64, 64, ADD_BIAS=(bias is not None))",
    '_splitk_reduce_kernel[grid](y_pp, y, bias, M, N, 64, 64, ADD_BIAS=(bias is not None),\n'
    '                                KERNEL_NAME="_reduce_kernel"{extra})')


def swap_after(extra: str = "", parameter: str = "") -> str:
    return SWAP_AFTER.format(extra=extra).replace("def gemm_reduce(y_pp, y, bias, M, N)",
                                                  f"def gemm_reduce(y_pp, y, bias, M, N{parameter})")


SWAP_TREE = {
    "kernels/kv_cache/reduce.py": f'''import triton
import triton.language as tl


@triton.jit
def _reduce_kernel(bias_ptr, y_pp_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   ADD_BIAS: tl.constexpr):
    pid = tl.program_id(0)


# portq: ports vllm:{SWAP_HOST}::gemm_reduce
def gemm_reduce(y_pp, y, bias, M, N):
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    _reduce_kernel[grid](bias, y_pp, y, M, N, 64, 64, ADD_BIAS=(bias is not None))
    return y
''',
    "kernels/mla_prefill/reduce_stage.py": '''from portq_kernels.kv_cache.reduce import gemm_reduce


def finish(y_pp, y, M, N):
    return gemm_reduce(y_pp, y, None, M, N)
''',
}


# --- a top-level name only upstream's decorator uses (aiter cca936ad30) ---

REPR_KERNEL = "aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"
REPR_BEFORE = '''import triton
import triton.language as tl

from aiter.ops.triton.utils import make_kernel_repr

_expand_repr = make_kernel_repr("_expand_kernel", ["BLOCK", "GRID_MN"])


@triton.jit(repr=_expand_repr)
def _expand_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.load(x_ptr + pid))
'''
REPR_AFTER = REPR_BEFORE.replace('["BLOCK", "GRID_MN"]', '["BLOCK"]')


def repr_tree(port_names_repr: bool) -> dict[str, str]:
    decorator = "@triton.jit(repr=_expand_repr)" if port_names_repr else "@triton.jit"
    declared = "_expand_repr = None\n" if port_names_repr else ""
    return {"kernels/mla_prefix/expand.py": f'''import triton
import triton.language as tl

{declared}

# portq: ports vllm:{REPR_KERNEL}::_expand_kernel
{decorator}
def _expand(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    item = tl.program_id(0)
    tl.store(out_ptr + item, tl.load(x_ptr + item))
'''}


# --- case 39: a new sibling with macros tree-sitter cannot parse (aiter cd994551ce, e0bbd84bbe) ---

# A launch macro with a block comment among its continuation lines, and a host
# that expands macros without a trailing semicolon: both are valid C++ that
# tree-sitter reports as syntax errors, the shape of aiter's activation and
# indexer-cache launch macros.
BROKEN_MACRO = r"""
#define LAUNCH_SCALED_ROWS(KERNEL)                                            \
  dim3 scaled_grid((n + 255) / 256);                                          \
  if (src.dtype() == at::kFloat) {                                            \
    /* one program per 256 rows, as copy_rows */                              \
    KERNEL<<<scaled_grid, dim3(256), 0, stream>>>(src.data_ptr<float>(),      \
                                                  dst.data_ptr<float>(), scale, n); \
  }
"""
SIBLING_KERNEL = r"""
namespace vllm {
__global__ void scale_rows_kernel(const float* __restrict__ src, float* __restrict__ dst, const float scale,
                                  const int64_t n) {
  for (int64_t i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256) dst[i] = src[i] * scale;
}
}  // namespace vllm

void scale_rows(torch::Tensor const& src, torch::Tensor& dst, double scale, int64_t n) {
  if (src.dtype() == at::kFloat) {
    LAUNCH_SCALED_ROWS(vllm::scale_rows_kernel)
  } else {
    TORCH_CHECK(false, "scale_rows takes float32")
  }
}
"""
SIBLING_AFTER = GRID_BEFORE.replace("namespace vllm {", BROKEN_MACRO.lstrip() + "\nnamespace vllm {", 1) + SIBLING_KERNEL
# the ported host launching through that macro: its own lines parse, the macro it expands does not
EXPANDED_AFTER = SIBLING_AFTER.replace(
    "  vllm::copy_rows_kernel<<<grid, block, 0, stream>>>(src.data_ptr<float>(), dst.data_ptr<float>(), n);\n",
    "  const float scale = 1.0f;\n  LAUNCH_SCALED_ROWS(vllm::copy_rows_kernel);\n")


# --- case 40: a grid through an unresolved call both upstream sides share (aiter c1d23fc94e) ---

QUANT_BEFORE = """\
#include <torch/all.h>

namespace vllm {
template <int LANES, int ROWS>
__global__ void quant_cache_kernel(const float* __restrict__ k, uint8_t* __restrict__ cache,
                                   const int64_t* __restrict__ slot_mapping, const int num_tokens,
                                   const int head_dim) {
  const int row = blockIdx.x * ROWS + threadIdx.y;
  if (row >= num_tokens * head_dim / 128) return;
  cache[slot_mapping[row * 128 / head_dim] * head_dim + threadIdx.x] = static_cast<uint8_t>(k[row * 128 + threadIdx.x]);
}
}  // namespace vllm

void quant_cache(torch::Tensor& k, torch::Tensor& cache, torch::Tensor& slot_mapping) {
  int num_tokens = k.size(0);
  int head_dim = k.size(1);
  int quant_blocks = num_tokens * head_dim / 128;
  const int lanes = 8;
  const int rows = device::warp_size() / lanes;
  dim3 grid((quant_blocks + rows - 1) / rows);
  dim3 block(lanes, rows);
  vllm::quant_cache_kernel<8, 4><<<grid, block, 0, stream>>>(
      k.data_ptr<float>(), cache.data_ptr<uint8_t>(), slot_mapping.data_ptr<int64_t>(), num_tokens, head_dim);
}
"""
# the token count that sizes the grid is bounded by the slot mapping: a launch-shape change in a binding
QUANT_AFTER = QUANT_BEFORE.replace("  int num_tokens = k.size(0);",
                                   "  int num_tokens = std::min(k.size(0), slot_mapping.size(0));")
# the unresolved part itself changes: nothing to set aside
QUANT_WARP_AFTER = QUANT_BEFORE.replace("device::warp_size() / lanes", "device::lanes_per_wave() / lanes")

_QUANT_PORT = r'''#include <torch/all.h>

namespace port {
// portq: ports vllm:csrc/cache_kernels.cu::vllm::quant_cache_kernel
template <int THREADS_X, int THREADS_Y>
__global__ void QuantCache(const float* __restrict__ k, uint8_t* __restrict__ cache,
                           const int64_t* __restrict__ slot_mapping, const int num_tokens, const int head_dim) {
  const int row = blockIdx.x * THREADS_Y + threadIdx.y;
  if (row >= num_tokens * head_dim / 128) return;
  cache[slot_mapping[row * 128 / head_dim] * head_dim + threadIdx.x] = static_cast<uint8_t>(k[row * 128 + threadIdx.x]);
}
}  // namespace port

// portq: ports vllm:csrc/cache_kernels.cu::quant_cache
void quant_cache(torch::Tensor& k, torch::Tensor& cache, torch::Tensor& slot_mapping) {
  const int tokens = {tokens};
  const int width = k.size(1);
  constexpr int x_threads = 8;
  constexpr int y_threads = 32 / x_threads;
  const int blocks = tokens * width / 128;
  const dim3 grid((blocks + y_threads - 1) / y_threads);
  port::QuantCache<x_threads, y_threads><<<grid, dim3(x_threads, y_threads), 0, stream>>>(
      k.data_ptr<float>(), cache.data_ptr<uint8_t>(), slot_mapping.data_ptr<int64_t>(), tokens, width);
}
'''

QUANT_CALLER = '''#include <torch/all.h>

void index_keys(torch::Tensor k, torch::Tensor cache, torch::Tensor slots) { quant_cache(k, cache, slots); }
'''


def quant_tree(tokens: str) -> dict[str, str]:
    return {"kernels/kv_cache/quant.cu": _QUANT_PORT.replace("{tokens}", tokens),
            "kernels/mla_prefill/index.cu": QUANT_CALLER}


# --- case 41: a C++ local assigned again before the launch --------------------------------

REASSIGNED_CPP_BEFORE = GRID_BEFORE.replace("  dim3 grid((n + 255) / 256);",
                                            "  int blocks = (n + 255) / 256;\n  dim3 grid(blocks);")
REASSIGNED_CPP_AFTER = GRID_BEFORE.replace(
    "  dim3 grid((n + 255) / 256);",
    "  int blocks = (n + 255) / 256;\n"
    "  const int num_sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;\n"
    "  blocks = std::min((n + 255) / 256, 4 * num_sms);\n"
    "  dim3 grid(blocks);")
# the second assignment only on one path: which value reaches the launch depends on it
REASSIGNED_CPP_BRANCH_AFTER = REASSIGNED_CPP_AFTER.replace(
    "  blocks = std::min((n + 255) / 256, 4 * num_sms);\n",
    "  if (n > (1 << 20)) blocks = std::min((n + 255) / 256, 4 * num_sms);\n")


# --- case 42: a C++ kernel's blockIdx decomposition, compared with a Triton port's ----------

PACKED_CPP_BEFORE = """\
#include <torch/all.h>

namespace vllm {
__global__ void expand_heads_kernel(const float* __restrict__ x, float* __restrict__ out, const int H, const int C) {
  const int item = blockIdx.x;
  const int b = item / H;
  const int h = item % H;
  for (int c = threadIdx.x; c < C; c += blockDim.x) out[(b * H + h) * C + c] = x[b * C + c];
}
}  // namespace vllm

void expand_heads(torch::Tensor const& x, torch::Tensor& out, int64_t B, int64_t H, int64_t C) {
  dim3 grid(B * H);
  vllm::expand_heads_kernel<<<grid, dim3(128), 0, stream>>>(x.data_ptr<float>(), out.data_ptr<float>(), H, C);
}
"""
# one program per (batch, head, chunk): more work packed into blockIdx.x
PACKED_CPP_AFTER = PACKED_CPP_BEFORE.replace(
    "  const int b = item / H;\n  const int h = item % H;\n"
    "  for (int c = threadIdx.x; c < C; c += blockDim.x) out[(b * H + h) * C + c] = x[b * C + c];\n",
    "  const int c = item % C;\n  const int b = item / (H * C);\n  const int h = (item / C) % H;\n"
    "  if (threadIdx.x == 0) out[(b * H + h) * C + c] = x[b * C + c];\n").replace(
    "  dim3 grid(B * H);", "  dim3 grid(B * H * C);")

_PACKED_CPP_PORT = '''import triton
import triton.language as tl


# portq: ports vllm:csrc/cache_kernels.cu::vllm::expand_heads_kernel
@triton.jit
def _expand_heads(x_ptr, out_ptr, H, C, BLOCK: tl.constexpr):
    work = tl.program_id(0)
{decomposition}


# portq: ports vllm:csrc/cache_kernels.cu::expand_heads
def expand_heads(x, out, B, H, C):
    _expand_heads[({grid},)](x, out, H, C, BLOCK=128)
'''
PACKED_CPP_OLD = "    b = work // H\n    h = work % H\n    tl.store(out_ptr + b * H + h, tl.load(x_ptr + b * C))"
PACKED_CPP_NEW = ("    c = work % C\n    b = work // (C * H)\n    h = (work // C) % H\n"
                  "    tl.store(out_ptr + (b * H + h) * C + c, tl.load(x_ptr + b * C + c))")


def packed_cpp_tree(decomposition: str, grid: str) -> dict[str, str]:
    return {"kernels/mla_prefix/expand.py": _PACKED_CPP_PORT.format(decomposition=decomposition, grid=grid),
            "kernels/mla_prefill/stage.py": "from portq_kernels.mla_prefix.expand import expand_heads\n\n\n"
                                            "def stage(x, out):\n    expand_heads(x, out, 2, 4, 8)\n"}


# --- threads per block changed in the local the launch names (the launch line reads the same) ---

THREADS_BEFORE = """\
#include <torch/all.h>

namespace vllm {
__global__ void scale_rows_kernel(float* __restrict__ x, const int64_t n) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= 2.0f;
}
}  // namespace vllm

void scale_rows(torch::Tensor& x, int64_t n) {
  const int threads = 256;
  dim3 grid((n + 255) / 256);
  vllm::scale_rows_kernel<<<grid, threads, 0, stream>>>(x.data_ptr<float>(), n);
}
"""
THREADS_AFTER = THREADS_BEFORE.replace("  const int threads = 256;", "  const int threads = 128;")
THREADS_TREE = {"kernels/kv_cache/scale.cu": """\
#include <torch/all.h>

// portq: ports vllm:csrc/cache_kernels.cu::vllm::scale_rows_kernel
__global__ void ScaleRows(float* __restrict__ x, const int64_t n) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= 2.0f;
}

// portq: ports vllm:csrc/cache_kernels.cu::scale_rows
void scale_rows(torch::Tensor& x, int64_t n) {
  constexpr int block = 256;
  const dim3 blocks((n + 255) / 256);
  ScaleRows<<<blocks, block, 0, stream>>>(x.data_ptr<float>(), n);
}
""", "kernels/mla_prefill/scale_all.cu": """\
#include <torch/all.h>

void scale_all(torch::Tensor x) {
  scale_rows(x, x.numel());
}
"""}
