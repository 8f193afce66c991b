"""Seed 000 as a fixture: a two-half commit.

Upstream ``csrc/cache_kernels.cu`` before and after the commit: one half
rewrites ``cp_gather_cache`` (a sibling the tree declares not carried), the
other renames the kernel behind ``gather_and_maybe_dequant_cache`` to a
page-task kernel, replaces the per-token launch and leaves ``token_to_seq``
dead in the host wrapper (``(void)token_to_seq;``). Three in-tree variants:
stale with a production caller, stale with only a test caller, and already
ported.
"""

BASE = """\
#include <torch/all.h>

namespace vllm {

template <typename scalar_t, int ENTRY_SIZE, int CTA_SIZE>
__global__ void gather_and_maybe_dequant_cache(
    const scalar_t* __restrict__ src_cache,
    scalar_t* __restrict__ dst,
    const int32_t* __restrict__ block_table,
    const int32_t* __restrict__ cu_seq_lens,
    const int32_t* __restrict__ token_to_seq,
    const int32_t num_tokens,
    const int32_t block_size,
    const int32_t* __restrict__ seq_starts) {
  const int token_id = blockIdx.x;
  if (token_id >= num_tokens) return;
  const int batch_id = token_to_seq[token_id];
  const int batch_start = cu_seq_lens[batch_id];
  const int offset = token_id - batch_start + (seq_starts ? seq_starts[batch_id] : 0);
  const int block = block_table[batch_id * 64 + offset / block_size];
  for (int i = threadIdx.x; i < ENTRY_SIZE; i += CTA_SIZE) {
    dst[token_id * ENTRY_SIZE + i] = src_cache[(block * block_size + offset % block_size) * ENTRY_SIZE + i];
  }
}

template <typename scalar_t>
__global__ void cp_gather_cache(
    const scalar_t* __restrict__ src_cache,
    scalar_t* __restrict__ dst,
    const int32_t* __restrict__ block_table,
    const int32_t* __restrict__ cu_seq_lens,
    const int32_t batch_size) {
  const int batch_id = blockIdx.x;
  const int split = blockIdx.y;
  const int start = cu_seq_lens[batch_id];
  const int end = cu_seq_lens[batch_id + 1];
  for (int t = start + split; t < end; t += gridDim.y) {
    dst[t] = src_cache[block_table[batch_id] + t - start];
  }
}

}  // namespace vllm

void gather_and_maybe_dequant_cache(
    torch::Tensor const& src_cache,
    torch::Tensor const& dst,
    torch::Tensor const& block_table,
    torch::Tensor const& cu_seq_lens,
    torch::Tensor const& token_to_seq,
    int64_t num_tokens,
    const std::string& kv_cache_dtype,
    torch::Tensor const& scale,
    std::optional<torch::Tensor> seq_starts = std::nullopt) {
  TORCH_CHECK(kv_cache_dtype == "auto", "only auto");
  TORCH_CHECK(scale.numel() == 1);
  constexpr int32_t thread_block_size = 64;
  const int32_t block_size = src_cache.size(1);
  dim3 grid(num_tokens);
  dim3 block(thread_block_size);
  vllm::gather_and_maybe_dequant_cache<float, 576, thread_block_size><<<grid, block, 0, stream>>>(
      src_cache.data_ptr<float>(), dst.data_ptr<float>(), block_table.data_ptr<int32_t>(),
      cu_seq_lens.data_ptr<int32_t>(), token_to_seq.data_ptr<int32_t>(), num_tokens, block_size,
      seq_starts.has_value() ? seq_starts->data_ptr<int32_t>() : nullptr);
}

void cp_gather_cache(
    torch::Tensor const& src_cache,
    torch::Tensor const& dst,
    torch::Tensor const& block_table,
    torch::Tensor const& cu_seq_lens,
    int64_t batch_size,
    std::optional<torch::Tensor> seq_starts = std::nullopt) {
  dim3 grid(batch_size, 16);
  dim3 block(1024);
  vllm::cp_gather_cache<float><<<grid, block, 0, stream>>>(
      src_cache.data_ptr<float>(), dst.data_ptr<float>(), block_table.data_ptr<int32_t>(),
      cu_seq_lens.data_ptr<int32_t>(), batch_size);
}
"""

AFTER = """\
#include <torch/all.h>

namespace vllm {

template <typename scalar_t, int ENTRY_SIZE>
__global__ void gather_and_maybe_dequant_cache_page(
    const scalar_t* __restrict__ src_cache,
    scalar_t* __restrict__ dst,
    const int32_t* __restrict__ block_table,
    const int32_t* __restrict__ cu_seq_lens,
    const int32_t num_reqs,
    const int32_t num_tokens,
    const int32_t block_size,
    const int32_t* __restrict__ seq_starts) {
  int req = 0;
  int rel = blockIdx.x;
  while (req < num_reqs) {
    const int len = cu_seq_lens[req + 1] - cu_seq_lens[req];
    const int start = seq_starts ? seq_starts[req] : 0;
    const int pages = (start + len + block_size - 1) / block_size - start / block_size;
    if (rel < pages) break;
    rel -= pages;
    ++req;
  }
  if (req >= num_reqs) return;
  const int block = block_table[req * 64 + rel];
  for (int i = threadIdx.x; i < block_size * ENTRY_SIZE; i += blockDim.x) {
    dst[cu_seq_lens[req] * ENTRY_SIZE + i] = src_cache[block * block_size * ENTRY_SIZE + i];
  }
  (void)num_tokens;
}

template <typename scalar_t>
__global__ void cp_gather_cache(
    const scalar_t* __restrict__ src_cache,
    scalar_t* __restrict__ dst,
    const int32_t* __restrict__ block_table,
    const int32_t* __restrict__ cu_seq_lens,
    const int32_t batch_size) {
  const int task = blockIdx.x;
  const int batch_id = task % batch_size;
  const int start = cu_seq_lens[batch_id];
  const int end = cu_seq_lens[batch_id + 1];
  for (int t = start + threadIdx.x; t < end; t += blockDim.x) {
    dst[t] = src_cache[block_table[batch_id] + t - start];
  }
}

}  // namespace vllm

void gather_and_maybe_dequant_cache(
    torch::Tensor const& src_cache,
    torch::Tensor const& dst,
    torch::Tensor const& block_table,
    torch::Tensor const& cu_seq_lens,
    torch::Tensor const& token_to_seq,
    int64_t num_tokens,
    const std::string& kv_cache_dtype,
    torch::Tensor const& scale,
    std::optional<torch::Tensor> seq_starts = std::nullopt) {
  TORCH_CHECK(kv_cache_dtype == "auto", "only auto");
  TORCH_CHECK(scale.numel() == 1);
  (void)token_to_seq;
  if (num_tokens == 0) return;
  const int32_t block_size = src_cache.size(1);
  const int32_t num_reqs = cu_seq_lens.size(0) - 1;
  const int page_threads = num_tokens >= (1 << 20) ? 128 : 256;
  dim3 grid(ceil_div(num_tokens, block_size) + 2 * num_reqs);
  dim3 block(page_threads);
  vllm::gather_and_maybe_dequant_cache_page<float, 576><<<grid, block, 0, stream>>>(
      src_cache.data_ptr<float>(), dst.data_ptr<float>(), block_table.data_ptr<int32_t>(),
      cu_seq_lens.data_ptr<int32_t>(), num_reqs, num_tokens, block_size,
      seq_starts.has_value() ? seq_starts->data_ptr<int32_t>() : nullptr);
}

void cp_gather_cache(
    torch::Tensor const& src_cache,
    torch::Tensor const& dst,
    torch::Tensor const& block_table,
    torch::Tensor const& cu_seq_lens,
    int64_t batch_size,
    std::optional<torch::Tensor> seq_starts = std::nullopt) {
  const int32_t num_tasks = batch_size * 4;
  dim3 grid(num_tasks);
  dim3 block(256);
  vllm::cp_gather_cache<float><<<grid, block, 0, stream>>>(
      src_cache.data_ptr<float>(), dst.data_ptr<float>(), block_table.data_ptr<int32_t>(),
      cu_seq_lens.data_ptr<int32_t>(), batch_size);
}
"""

STALE_PORT = '''\
"""Triton port of the paged KV-cache gather."""
import triton
import triton.language as tl

# portq: not-carried vllm:csrc/cache_kernels.cu::cp_gather_cache -- fp8/DCP sibling, not carried


# portq: ports vllm:csrc/cache_kernels.cu::vllm::gather_and_maybe_dequant_cache
@triton.jit
def _gather_and_maybe_dequant_cache_kernel(
    src_cache_ptr,
    dst_ptr,
    block_table_ptr,
    cu_seq_lens_ptr,
    token_to_seq_ptr,
    num_tokens,
    block_size,
    seq_starts_ptr,
    ENTRY_SIZE: tl.constexpr,
):
    token_id = tl.program_id(0)
    batch_id = tl.load(token_to_seq_ptr + token_id)
    batch_start = tl.load(cu_seq_lens_ptr + batch_id)
    offset = token_id - batch_start + tl.load(seq_starts_ptr + batch_id)
    block = tl.load(block_table_ptr + batch_id * 64 + offset // block_size)
    cols = tl.arange(0, ENTRY_SIZE)
    row = tl.load(src_cache_ptr + (block * block_size + offset % block_size) * ENTRY_SIZE + cols)
    tl.store(dst_ptr + token_id * ENTRY_SIZE + cols, row, mask=token_id < num_tokens)


# portq: ports vllm:csrc/cache_kernels.cu::gather_and_maybe_dequant_cache
def gather_and_maybe_dequant_cache(src_cache, dst, block_table, cu_seq_lens, token_to_seq, num_tokens,
                                   kv_cache_dtype, scale, seq_starts=None):
    assert kv_cache_dtype == "auto" and scale.numel() == 1
    block_size = src_cache.shape[1]
    grid = (num_tokens,)
    _gather_and_maybe_dequant_cache_kernel[grid](
        src_cache, dst, block_table, cu_seq_lens, token_to_seq, num_tokens, block_size, seq_starts,
        ENTRY_SIZE=576, num_warps=2,
    )
'''

SYNCED_PORT = '''\
"""Triton port of the paged KV-cache gather (page tasks)."""
import triton
import triton.language as tl

# portq: not-carried vllm:csrc/cache_kernels.cu::cp_gather_cache -- fp8/DCP sibling, not carried


# portq: ports vllm:csrc/cache_kernels.cu::vllm::gather_and_maybe_dequant_cache_page
@triton.jit
def _gather_page_kernel(
    src_cache_ptr,
    dst_ptr,
    block_table_ptr,
    cu_seq_lens_ptr,
    num_reqs,
    num_tokens,
    block_size,
    seq_starts_ptr,
    ENTRY_SIZE: tl.constexpr,
):
    task = tl.program_id(0)
    req = tl.load(cu_seq_lens_ptr + task % num_reqs)
    block = tl.load(block_table_ptr + req * 64)
    cols = tl.arange(0, ENTRY_SIZE)
    row = tl.load(src_cache_ptr + block * block_size * ENTRY_SIZE + cols)
    tl.store(dst_ptr + req * ENTRY_SIZE + cols, row, mask=req < num_tokens)
    tl.load(seq_starts_ptr)


# portq: ports vllm:csrc/cache_kernels.cu::gather_and_maybe_dequant_cache
def gather_and_maybe_dequant_cache(src_cache, dst, block_table, cu_seq_lens, num_tokens,
                                   kv_cache_dtype, scale, seq_starts=None):
    assert kv_cache_dtype == "auto" and scale.numel() == 1
    if num_tokens == 0:
        return
    block_size = src_cache.shape[1]
    num_reqs = cu_seq_lens.shape[0] - 1
    grid = (triton.cdiv(num_tokens, block_size) + 2 * num_reqs,)
    _gather_page_kernel[grid](
        src_cache, dst, block_table, cu_seq_lens, num_reqs, num_tokens, block_size, seq_starts,
        ENTRY_SIZE=576, num_warps=4,
    )
'''

PRODUCTION_CALLER = '''\
"""The MLA chunked-context prefill: gathers each chunk's cached context."""
from portq_kernels.kv_cache.gather import gather_and_maybe_dequant_cache


def gather_chunk(cache, workspace, block_table, cu_seq_lens, token_to_seq, num_tokens, scale):
    gather_and_maybe_dequant_cache(cache, workspace, block_table, cu_seq_lens, token_to_seq,
                                   num_tokens, "auto", scale)
    return workspace
'''

TEST_CALLER = '''\
from portq_kernels.kv_cache.gather import gather_and_maybe_dequant_cache


def test_gather_matches_reference(cache, dst, table, lens, back_map, scale):
    gather_and_maybe_dequant_cache(cache, dst, table, lens, back_map, 4, "auto", scale)
'''

STALE_TREE = {
    "kernels/kv_cache/gather.py": STALE_PORT,
    "kernels/mla_prefill/chunked_context.py": PRODUCTION_CALLER,
    "tests/kernels/kv_cache/test_gather.py": TEST_CALLER,
}
TESTS_ONLY_TREE = {
    "kernels/kv_cache/gather.py": STALE_PORT,
    "tests/kernels/kv_cache/test_gather.py": TEST_CALLER,
}
SYNCED_TREE = {
    "kernels/kv_cache/gather.py": SYNCED_PORT,
    "kernels/mla_prefill/chunked_context.py": PRODUCTION_CALLER.replace("token_to_seq, num_tokens", "num_tokens"),
    "tests/kernels/kv_cache/test_gather.py": TEST_CALLER,
}

TITLE = "[Kernel] Optimize long-context MLA cache gathers (#51739)"
