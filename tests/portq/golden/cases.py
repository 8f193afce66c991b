"""Upstream and in-tree sources of the tricky cases (docs/tricky-cases.md)
other than seed 000 (``seed000.py``). Each upstream text is one file state;
each tree is a mapping of in-tree path to text."""

# --- seed 002: an op gains seq_starts=None ------------------------------------

OPS_PATH = "vllm/_custom_ops.py"
OPS_BEFORE = '''\
import torch


def cp_gather_and_upconvert_nvfp4_kv_cache(src_cache, dst, block_table, workspace_starts, batch_size):
    torch.ops._C_cache_ops.cp_gather_and_upconvert_nvfp4_kv_cache(
        src_cache, dst, block_table, workspace_starts, batch_size)
'''
OPS_AFTER = '''\
import torch


def cp_gather_and_upconvert_nvfp4_kv_cache(src_cache, dst, block_table, workspace_starts, batch_size,
                                           seq_starts: torch.Tensor | None = None):
    torch.ops._C_cache_ops.cp_gather_and_upconvert_nvfp4_kv_cache(
        src_cache, dst, block_table, workspace_starts, batch_size, seq_starts)
'''
NVFP4_PORT = '''\
# portq: ports vllm:vllm/_custom_ops.py::cp_gather_and_upconvert_nvfp4_kv_cache
def cp_gather_and_upconvert_nvfp4_kv_cache(src_cache, dst, block_table, workspace_starts, batch_size{extra}):
    return _launch(src_cache, dst, block_table, workspace_starts, batch_size{extra_use})
'''
NVFP4_CALLER = '''\
from portq_kernels.kv_cache.nvfp4 import cp_gather_and_upconvert_nvfp4_kv_cache


def prefill_context(cache, workspace, table, starts, batch):
    cp_gather_and_upconvert_nvfp4_kv_cache(cache, workspace, table, starts, batch)
'''


def nvfp4_tree(with_seq_starts: bool) -> dict[str, str]:
    port = NVFP4_PORT.format(extra=", seq_starts=None" if with_seq_starts else "",
                             extra_use=", seq_starts" if with_seq_starts else "")
    return {"kernels/kv_cache/nvfp4.py": port, "kernels/mla_prefill/context.py": NVFP4_CALLER}


# --- a Triton launch that stays 1-D while program_id(0) packs more work ----------

PREFIX_HOST = "aiter/ops/triton/gather_kv_b_proj.py"
PREFIX_KERNEL = "aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"
PREFIX_HOST_BEFORE = '''\
import triton
from aiter.ops.triton._triton_kernels.gather_kv_b_proj import _triton_gather_kv_b_proj


def gather_kv_b_proj(k_buffer, kv_indptr, kv_indices, weight, k_prefix, v_prefix):
    B = kv_indptr.shape[0] - 1
    H = k_prefix.shape[1]
    grid = (B * H,)
    _triton_gather_kv_b_proj[grid](k_buffer, kv_indptr, kv_indices, weight, k_prefix, v_prefix, H,
                                   CHUNK=128, num_warps=4)
'''
PREFIX_HOST_AFTER = '''\
import triton
from aiter.ops.triton._triton_kernels.gather_kv_b_proj import _triton_gather_kv_b_proj


def gather_kv_b_proj(k_buffer, kv_indptr, kv_indices, weight, k_prefix, v_prefix):
    B = kv_indptr.shape[0] - 1
    H = k_prefix.shape[1]
    C = triton.cdiv(k_prefix.shape[0], 128)
    grid = (B * H * C,)
    _triton_gather_kv_b_proj[grid](k_buffer, kv_indptr, kv_indices, weight, k_prefix, v_prefix, H, C,
                                   CHUNK=128, num_warps=4)
'''
PREFIX_KERNEL_BEFORE = '''\
import triton
import triton.language as tl


@triton.jit
def _triton_gather_kv_b_proj(k_buffer, kv_indptr, kv_indices, weight, k_prefix, v_prefix, H,
                             CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // H
    h = pid % H
    start = tl.load(kv_indptr + b)
    end = tl.load(kv_indptr + b + 1)
    for c in range(0, tl.cdiv(end - start, CHUNK)):
        offs = start + c * CHUNK + tl.arange(0, CHUNK)
        rows = tl.load(k_buffer + tl.load(kv_indices + offs))
        tl.store(k_prefix + offs * H + h, rows)
'''
PREFIX_KERNEL_AFTER = '''\
import triton
import triton.language as tl


@triton.jit
def _triton_gather_kv_b_proj(k_buffer, kv_indptr, kv_indices, weight, k_prefix, v_prefix, H, C,
                             CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    bh = pid // C
    b = bh // H
    h = bh % H
    start = tl.load(kv_indptr + b)
    end = tl.load(kv_indptr + b + 1)
    if c * CHUNK >= end - start:
        return
    offs = start + c * CHUNK + tl.arange(0, CHUNK)
    rows = tl.load(k_buffer + tl.load(kv_indices + offs))
    tl.store(k_prefix + offs * H + h, rows)
'''


def prefix_tree(upstream_kernel: str, upstream_host: str) -> dict[str, str]:
    """A port whose kernel and host are the upstream ones, anchored."""
    kernel = upstream_kernel.replace(
        "@triton.jit", f"# portq: ports vllm:{PREFIX_KERNEL}::_triton_gather_kv_b_proj\n@triton.jit")
    host = upstream_host.replace("from aiter.ops.triton._triton_kernels.gather_kv_b_proj import",
                                 "from portq_kernels.mla_prefix.kernel import").replace(
        "def gather_kv_b_proj", f"# portq: ports vllm:{PREFIX_HOST}::gather_kv_b_proj\ndef gather_kv_b_proj")
    caller = ("from portq_kernels.mla_prefix.host import gather_kv_b_proj\n\n\n"
              "def expand_prefix(cache, indptr, indices, weight, k, v):\n"
              "    gather_kv_b_proj(cache, indptr, indices, weight, k, v)\n")
    return {"kernels/mla_prefix/kernel.py": kernel, "kernels/mla_prefix/host.py": host,
            "kernels/mla_prefill/prefix.py": caller}


# --- a new sibling kernel dispatched from the ported wrapper -------------------------

WRITE_BEFORE = """\
namespace vllm {
template <typename scalar_t>
__global__ void concat_and_cache_mla_kernel(const scalar_t* __restrict__ kv_c, const scalar_t* __restrict__ k_pe,
                                            scalar_t* __restrict__ kv_cache, const int64_t* __restrict__ slot_mapping) {
  const int64_t slot = slot_mapping[blockIdx.x];
  if (slot < 0) return;
  kv_cache[slot] = kv_c[blockIdx.x] + k_pe[blockIdx.x];
}
}  // namespace vllm

void concat_and_cache_mla(torch::Tensor& kv_c, torch::Tensor& k_pe, torch::Tensor& kv_cache,
                          torch::Tensor& slot_mapping, const std::string& kv_cache_dtype, torch::Tensor& scale) {
  TORCH_CHECK(scale.numel() == 1 && kv_cache_dtype.size() > 0);
  int num_tokens = slot_mapping.size(0);
  dim3 grid(num_tokens);
  dim3 block(512);
  vllm::concat_and_cache_mla_kernel<float><<<grid, block, 0, stream>>>(
      kv_c.data_ptr<float>(), k_pe.data_ptr<float>(), kv_cache.data_ptr<float>(), slot_mapping.data_ptr<int64_t>());
}
"""
WRITE_AFTER = """\
namespace vllm {
template <typename scalar_t>
__global__ void concat_and_cache_mla_kernel(const scalar_t* __restrict__ kv_c, const scalar_t* __restrict__ k_pe,
                                            scalar_t* __restrict__ kv_cache, const int64_t* __restrict__ slot_mapping) {
  const int64_t slot = slot_mapping[blockIdx.x];
  if (slot < 0) return;
  kv_cache[slot] = kv_c[blockIdx.x] + k_pe[blockIdx.x];
}

template <typename scalar_t>
__global__ void concat_and_cache_ds_mla_kernel(const scalar_t* __restrict__ kv_c, const scalar_t* __restrict__ k_pe,
                                               uint8_t* __restrict__ kv_cache, const int64_t* __restrict__ slot_mapping) {
  const int64_t slot = slot_mapping[blockIdx.x];
  if (slot < 0) return;
  kv_cache[slot * 656] = static_cast<uint8_t>(kv_c[blockIdx.x] / 448.0f);
}
}  // namespace vllm

void concat_and_cache_mla(torch::Tensor& kv_c, torch::Tensor& k_pe, torch::Tensor& kv_cache,
                          torch::Tensor& slot_mapping, const std::string& kv_cache_dtype, torch::Tensor& scale) {
  TORCH_CHECK(scale.numel() == 1 && kv_cache_dtype.size() > 0);
  int num_tokens = slot_mapping.size(0);
  dim3 grid(num_tokens);
  dim3 block(512);
  if (kv_cache_dtype == "fp8_ds_mla") {
    vllm::concat_and_cache_ds_mla_kernel<float><<<grid, block, 0, stream>>>(
        kv_c.data_ptr<float>(), k_pe.data_ptr<float>(), kv_cache.data_ptr<uint8_t>(), slot_mapping.data_ptr<int64_t>());
    return;
  }
  vllm::concat_and_cache_mla_kernel<float><<<grid, block, 0, stream>>>(
      kv_c.data_ptr<float>(), k_pe.data_ptr<float>(), kv_cache.data_ptr<float>(), slot_mapping.data_ptr<int64_t>());
}
"""
WRITE_PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:csrc/cache_kernels.cu::concat_and_cache_mla_kernel
@triton.jit
def _concat_and_cache_mla_kernel(kv_c_ptr, k_pe_ptr, kv_cache_ptr, slot_mapping_ptr):
    token = tl.program_id(0)
    slot = tl.load(slot_mapping_ptr + token)
    if slot < 0:
        return
    tl.store(kv_cache_ptr + slot, tl.load(kv_c_ptr + token) + tl.load(k_pe_ptr + token))


# portq: ports vllm:csrc/cache_kernels.cu::concat_and_cache_mla
def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    assert scale.numel() == 1 and kv_cache_dtype
    num_tokens = slot_mapping.shape[0]
    _concat_and_cache_mla_kernel[(num_tokens,)](kv_c, k_pe, kv_cache, slot_mapping, num_warps=4)
'''
WRITE_CALLER = '''\
from portq_kernels.kv_cache.write import concat_and_cache_mla


def store_latent(kv_c, k_pe, cache, slots, dtype, scale):
    concat_and_cache_mla(kv_c, k_pe, cache, slots, dtype, scale)
'''
WRITE_TREE = {"kernels/kv_cache/write.py": WRITE_PORT, "kernels/mla_prefill/store.py": WRITE_CALLER}

# --- body-only fixes and comment-only edits on a ported Triton kernel ------------------

SPARSE_PATH = "vllm/v1/attention/backends/mla/sparse_utils.py"
SPARSE_BEFORE = '''\
import triton
import triton.language as tl


@triton.jit
def _convert_req_index_kernel(req_id_ptr, block_table_ptr, token_indices_ptr, out_ptr, num_tokens,
                              BLOCK_SIZE: tl.constexpr, BLOCK_N: tl.constexpr):
    # one program per token row
    token = tl.program_id(0)
    req = tl.load(req_id_ptr + token)
    offs = tl.arange(0, BLOCK_N)
    idx = tl.load(token_indices_ptr + token * BLOCK_N + offs)
    block = tl.load(block_table_ptr + req * 64 + idx // BLOCK_SIZE)
    tl.store(out_ptr + token * BLOCK_N + offs, block * BLOCK_SIZE + idx % BLOCK_SIZE)
'''
SPARSE_BODY_FIX = SPARSE_BEFORE.replace(
    "    offs = tl.arange(0, BLOCK_N)\n    idx = tl.load(token_indices_ptr + token * BLOCK_N + offs)\n",
    "    offs = tl.arange(0, BLOCK_N)\n    row = token.to(tl.int64) * BLOCK_N\n"
    "    idx = tl.load(token_indices_ptr + row + offs, mask=offs < BLOCK_N, other=-1)\n",
)
SPARSE_COMMENT_ONLY = SPARSE_BEFORE.replace(
    "    # one program per token row\n",
    "    # One program per token row: the row's BLOCK_N indices map to physical\n"
    "    # slots through the request's block table.\n",
).replace("    req = tl.load(req_id_ptr + token)\n", "    req = tl.load(req_id_ptr + token)  # request of this row\n\n")
SPARSE_PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::_convert_req_index_kernel
@triton.jit
def _convert_req_index_kernel(req_id_ptr, block_table_ptr, token_indices_ptr, out_ptr, num_tokens,
                              BLOCK_SIZE: tl.constexpr, BLOCK_N: tl.constexpr):
    token = tl.program_id(0)
    req = tl.load(req_id_ptr + token)
    offs = tl.arange(0, BLOCK_N)
    idx = tl.load(token_indices_ptr + token * BLOCK_N + offs)
    block = tl.load(block_table_ptr + req * 64 + idx // BLOCK_SIZE)
    tl.store(out_ptr + token * BLOCK_N + offs, block * BLOCK_SIZE + idx % BLOCK_SIZE)


def convert_req_index(req_id, block_table, token_indices, out):
    _convert_req_index_kernel[(req_id.shape[0],)](req_id, block_table, token_indices, out, req_id.shape[0],
                                                  BLOCK_SIZE=64, BLOCK_N=128)
'''
SPARSE_TREE = {"kernels/mla_sparse/convert.py": SPARSE_PORT}

# --- a sparse-utils helper no one ports (the other row of a mixed commit) -------------

SPARSE_HELPER_BEFORE = SPARSE_BEFORE + '''

def request_row_bounds(req_idx):
    return req_idx
'''
SPARSE_HELPER_AFTER = SPARSE_BEFORE + '''

def request_row_bounds(req_idx):
    assert req_idx.size > 0
    return req_idx
'''

# --- decoys ------------------------------------------------------------------------------------

CI_BEFORE = "steps:\n  - label: kernels\n    commands:\n      - pytest tests/kernels/core\n"
CI_AFTER = CI_BEFORE + "      - pytest tests/kernels/test_cache.py -k gather_and_maybe_dequant_cache\n"
CODEOWNERS_BEFORE = "/vllm/ @core\n"
CODEOWNERS_AFTER = "/vllm/ @core\n/csrc/cache_kernels.cu @kernels-team\n"
README_BEFORE = "# vLLM\n"
README_AFTER = "# vLLM\n\nThe `gather_and_maybe_dequant_cache` kernel now runs one block per page.\n"
UPSTREAM_TEST_BEFORE = '''\
def test_gather_and_maybe_dequant_cache():
    assert True
'''
UPSTREAM_TEST_AFTER = '''\
def test_gather_and_maybe_dequant_cache():
    assert 1 + 1 == 2
'''


# --- a new struct and the device function that fills it through an out-parameter ---

PAGE_TASK_BEFORE = """\
namespace vllm {
__global__ void gather_kernel(const int* src, int* dst, int n) {
  dst[blockIdx.x] = src[blockIdx.x];
}
}  // namespace vllm
"""
PAGE_TASK_AFTER = """\
namespace vllm {
// One (request, page) pair per CTA.
struct PageTask {
  int32_t req_id;
  int32_t page_begin;
};

__device__ bool map_page_task(int32_t task, int32_t num_reqs, PageTask* out) {
  out->req_id = task % num_reqs;
  out->page_begin = task / num_reqs;
  return task < 4 * num_reqs;
}

__global__ void gather_kernel(const int* src, int* dst, int n) {
  dst[blockIdx.x] = src[blockIdx.x];
}
}  // namespace vllm
"""
PAGE_TASK_PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:csrc/cache_kernels.cu::map_page_task
@triton.jit
def map_page_task(task, num_reqs):
    req_id = task % num_reqs
    page_begin = task // num_reqs
    return task < 4 * num_reqs, req_id, {returned}
'''


def page_task_tree(returns_page_begin: bool) -> dict[str, str]:
    returned = "page_begin" if returns_page_begin else "0"
    return {"kernels/kv_cache/page_task.py": PAGE_TASK_PORT.format(returned=returned)}


# --- a kernel parameter renamed at the launch; the port passes it positionally -------

SPLAT_HOST = "aiter/ops/triton/gather_kv_b_proj.py"
SPLAT_BEFORE = '''\
import triton
import triton.language as tl


@triton.jit
def _scale_rows_kernel(x_ptr, out_ptr, stride_x_t, stride_x_d, SEQ_LEN, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_D)
    if row < SEQ_LEN:
        v = tl.load(x_ptr + row * stride_x_t + offs * stride_x_d)
        tl.store(out_ptr + row * stride_x_t + offs * stride_x_d, v * 2)


def scale_rows(x, out):
    t = x.shape[0]
    _scale_rows_kernel[(t,)](x, out, *x.stride(), SEQ_LEN=t, BLOCK_D=x.shape[1])
'''
SPLAT_RENAMED = SPLAT_BEFORE.replace("SEQ_LEN", "T")
SPLAT_NEW_INPUT = SPLAT_BEFORE.replace(
    "x_ptr, out_ptr, stride_x_t", "x_ptr, out_ptr, scale_ptr, stride_x_t").replace(
    "v * 2)", "v * tl.load(scale_ptr))").replace(
    "def scale_rows(x, out):", "def scale_rows(x, out, scale):").replace(
    "](x, out, *x.stride(), SEQ_LEN=t,", "](x, out, scale, *x.stride(), SEQ_LEN=t,")


def splat_tree(pass_: str = "") -> dict[str, str]:
    """A re-implemented port: own names, the length passed positionally after
    the ``*x.stride()`` splat, the constexpr by keyword."""
    port = (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\n"
        "def _double_kernel(src, dst, row_stride, col_stride, rows, WIDTH: tl.constexpr):\n"
        "    r = tl.program_id(0)\n"
        "    cols = tl.arange(0, WIDTH)\n"
        "    if r < rows:\n"
        "        tl.store(dst + r * row_stride + cols * col_stride,\n"
        "                 tl.load(src + r * row_stride + cols * col_stride) * 2)\n\n\n"
        f"# portq: ports vllm:{SPLAT_HOST}::scale_rows\n"
        "def double_rows(x, out):\n"
        "    rows = x.shape[0]\n"
        f"    _double_kernel[(rows,)](x, out, *x.stride(), rows{pass_}, WIDTH=x.shape[1])\n"
    )
    caller = ("from portq_kernels.mla_prefix.rows import double_rows\n\n\n"
              "def prepare(x, out):\n    double_rows(x, out)\n")
    return {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller}
