"""Signatures of C++/CUDA and Python/Triton definitions (DESIGN §6)."""
from __future__ import annotations

from portq.language.extraction import signature_of
from portq.language.signatures import normalise_name
from portq.language.symbols import symbol_table

CUDA = b"""
namespace vllm {
template <typename scalar_t, int ENTRY_SIZE>
__global__ void gather(const scalar_t* __restrict__ src_cache, const int32_t* __restrict__ token_to_seq,
                       const int32_t num_tokens) {
  const int b = token_to_seq[blockIdx.x];
  (void)num_tokens;
  if (gridDim.x > 1) return;
}
}
#define CALL_GATHER(T) \\
  vllm::gather<T, 576><<<grid, block, 0, stream>>>(src_cache.data_ptr<T>(), token_to_seq.data_ptr<int>(), num_tokens);

void host(torch::Tensor const& src_cache, torch::Tensor const& token_to_seq, int64_t num_tokens,
          std::optional<torch::Tensor> seq_starts = std::nullopt) {
  constexpr int32_t thread_block_size = 64;
  dim3 grid(num_tokens);
  dim3 block(thread_block_size);
  DISPATCH_BY_KV_CACHE_DTYPE(src_cache.dtype(), CALL_GATHER);
}

void paged(torch::Tensor const& cu_seq_lens, torch::Tensor const& token_to_seq, int64_t num_tokens, int64_t block_size) {
  (void)token_to_seq;
  const int32_t num_reqs = cu_seq_lens.size(0) - 1;
  dim3 grid(ceil_div(num_tokens, block_size) + 2 * num_reqs);
  vllm::gather_page<float, 576><<<grid, 256, 0, stream>>>(cu_seq_lens.data_ptr<int>(), num_reqs, num_tokens);
}
"""

TRITON = b"""
import triton
import triton.language as tl


@triton.jit
def _kernel(src_cache_ptr, token_to_seq_p, H, C, unused, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    bh = pid // C
    h = bh % H
    if c >= H:
        return
    n = tl.num_programs(0)
    del unused
    tl.store(src_cache_ptr + h, tl.load(token_to_seq_p + c + n))


class Op:
    def run(self, src_cache, token_to_seq, seq_starts=None):
        B, H = src_cache.shape[:2]
        C = triton.cdiv(token_to_seq.shape[0], 128)
        grid = (B * H * C,)
        _kernel[grid](src_cache, token_to_seq, H, C, 0, BLOCK=128, num_warps=4, num_stages=2)
"""


def _signatures(source: bytes, path: str) -> dict:
    table = symbol_table(source, path)
    return {d.qualified_name: signature_of(d, source, path) for d in table.definitions}


def test_normalised_names_make_cuda_and_triton_params_comparable():
    assert normalise_name("src_cache_ptr") == normalise_name("src_cache") == "src_cache"
    assert normalise_name("token_to_seq_p") == "token_to_seq"
    assert normalise_name("_Block_Table_PTR") == "block_table"


def test_cuda_params_drop_types_and_qualifiers_and_flag_template_params():
    kernel = _signatures(CUDA, "a.cu")["vllm::gather"]
    assert kernel.param_names == ["entry_size", "src_cache", "token_to_seq", "num_tokens"]
    assert [p.constexpr for p in kernel.params] == [True, False, False, False]


def test_default_present_is_recorded():
    host = _signatures(CUDA, "a.cu")["host"]
    assert [p.has_default for p in host.params] == [False, False, False, True]


def test_void_cast_parameter_is_dead():
    signatures = _signatures(CUDA, "a.cu")
    assert "num_tokens" in signatures["vllm::gather"].dead_params
    assert "token_to_seq" not in signatures["vllm::gather"].dead_params
    assert "token_to_seq" in signatures["paged"].dead_params


def test_uses_inside_a_launch_macro_keep_a_parameter_alive():
    host = _signatures(CUDA, "a.cu")["host"]
    assert "token_to_seq" not in host.dead_params and "seq_starts" in host.dead_params


def test_launch_in_a_macro_resolves_dim3_grid_and_literal_block():
    (launch,) = _signatures(CUDA, "a.cu")["host"].launches
    assert launch.kernel_normalised == "gather" and launch.via_macro == "CALL_GATHER"
    assert launch.grid_identifiers == ("num_tokens",) and launch.grid_shape == 1 and launch.block == 64
    assert launch.arguments == ("src_cache", "token_to_seq", "num_tokens")


def test_grid_identifiers_resolve_through_local_assignments():
    (launch,) = _signatures(CUDA, "a.cu")["paged"].launches
    assert set(launch.grid_identifiers) == {"num_tokens", "block_size", "num_reqs", "cu_seq_lens"}
    assert launch.block == 256


def test_cuda_kernel_reads_block_and_grid_axes():
    kernel = _signatures(CUDA, "a.cu")["vllm::gather"]
    assert kernel.program_id_axes == [0] and kernel.num_programs_axes == [0]


def test_triton_constexpr_and_del_are_seen():
    kernel = _signatures(TRITON, "k.py")["_kernel"]
    assert kernel.param_names == ["src_cache", "token_to_seq", "h", "c", "unused", "block"]
    assert kernel.params[-1].constexpr and "unused" in kernel.dead_params


def test_triton_program_id_decomposition_and_early_exit():
    kernel = _signatures(TRITON, "k.py")["_kernel"]
    assert {(d.axis, d.operator, d.operand) for d in kernel.decomposition} >= {(0, "%", "c"), (0, "//", "c"), (0, "%", "h")}
    assert kernel.num_programs_axes == [0] and kernel.early_exit_guards == ["c", "h"]
    assert kernel.early_exits[0].quote == "if c >= H:"


def test_triton_launch_grid_shape_warps_and_stages_and_self_dropped():
    method = _signatures(TRITON, "k.py")["Op.run"]
    assert method.param_names == ["src_cache", "token_to_seq", "seq_starts"]
    (launch,) = method.launches
    assert launch.grid_shape == 1 and launch.grid_text == "(B * H * C,)"
    assert {"b", "h", "c", "src_cache", "token_to_seq"} <= set(launch.grid_identifiers)
    assert (launch.num_warps, launch.num_stages) == (4, 2)


def test_comments_do_not_change_the_body_hash():
    plain = b"def f(x):\n    return x + 1\n"
    commented = b'def f(x):\n    """Doc."""\n    # add one\n    return (x + 1)  # done\n'
    hashes = [signature_of(symbol_table(s, "m.py").definitions[0], s).body_tokens_hash for s in (plain, commented)]
    assert hashes[0] != hashes[1]  # parentheses are a token change, not a comment
    recommented = b'def f(x):\n    """Doc."""\n    # add one\n    return x + 1  # done\n'
    assert signature_of(symbol_table(recommented, "m.py").definitions[0], recommented).body_tokens_hash == hashes[0]


def test_signature_round_trips_through_json():
    from portq.language.signatures import Signature

    kernel = _signatures(TRITON, "k.py")["_kernel"]
    assert Signature.from_json(kernel.to_json()) == kernel


OUT_PARAMS = b"""
__device__ bool map_task(int32_t task, Task* out, int32_t& count, const Task* seen, int32_t* dst, Task& both) {
  out->req_id = task;
  (*out).page = task / 4;
  count = 1;
  dst[0] = seen->req_id;
  both.page = both.req_id;
  return true;
}
"""


def test_cpp_out_parameters_are_the_ones_only_written_through():
    signature = _signatures(OUT_PARAMS, "a.cu")["map_task"]
    assert signature.out_params == {"out": ("req_id", "page"), "count": ("count",)}


def test_python_returned_names_leave_nested_definitions_out():
    source = b"def f(task):\n    def g():\n        return inner\n    req_id = task\n    return task > 0, req_id, 3\n"
    assert _signatures(source, "m.py")["f"].returned == ("req_id",)


LAUNCHES = b"""
import triton
import triton.language as tl
from elsewhere import imported_kernel


@triton.jit
def _kernel(x_ptr, counts_ptr, n, counts_stride, BLOCK: tl.constexpr):
    pass


def wrapper(x, counts, n):
    _kernel[(n,)](x, counts, n, counts.stride(0), BLOCK=256, num_warps=4)
    imported_kernel[(n,)](x, n, BLOCK=256)
"""


def test_launch_arguments_bind_to_the_parameters_of_a_kernel_in_the_same_file():
    launch = _signatures(LAUNCHES, "k.py")["wrapper"].launches[0]
    assert launch.slots == ("#0", "#1", "#2", "#3", "block")
    assert launch.texts[3] == "counts.stride(0)"
    assert launch.bound == ("x", "counts", "n", "counts_stride", "block")


def test_launch_of_a_kernel_defined_elsewhere_has_no_binding():
    assert _signatures(LAUNCHES, "k.py")["wrapper"].launches[1].bound is None


def test_cuda_launch_binds_function_parameters_not_template_parameters():
    launch = _signatures(CUDA, "a.cu")["host"].launches[0]
    assert launch.bound == ("src_cache", "token_to_seq", "num_tokens")


HELPERS = b"""
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, n, ROWS: tl.constexpr):
    pass


_fast = _k
_single = _k[(1,)]


def prebound(x, n):
    launch = _k[(n,)]
    launch(x, n, ROWS=4)


def aliased(x, n):
    _fast[(n,)](x, n, ROWS=4)
    _single(x, n, ROWS=4)


def _launch(kernel, views, n, *, rows):
    grid = (n,)
    kernel[grid](*views, n, ROWS=rows)


def _dispatch(x, n, rows):
    _launch(_k, (x,), n, rows=rows)


def wrapper(x, n, rows=8):
    _dispatch(x, n, rows)
"""


def test_a_pre_bound_kernel_object_called_later_is_a_launch():
    (launch,) = _signatures(HELPERS, "k.py")["prebound"].launches
    assert (launch.kernel, launch.grid_text, launch.bound) == ("_k", "(n,)", ("x", "n", "rows"))


def test_module_level_aliases_and_pre_bound_launchers_name_the_kernel():
    launches = _signatures(HELPERS, "k.py")["aliased"].launches
    assert [(l.kernel, l.grid_text) for l in launches] == [("_k", "(n,)"), ("_k", "(1,)")]


def test_launches_in_same_module_helpers_are_followed_two_levels_with_the_callers_arguments():
    (launch,) = _signatures(HELPERS, "k.py")["wrapper"].launches
    assert launch.kernel == "_k" and launch.via_helper == "_dispatch > _launch"
    assert launch.bound == ("x", "n", "rows")  # *views with views = (x,) binds positionally
    assert launch.quote == "kernel[grid](*views, n, ROWS=rows)"


DECOMPOSED = b"""
import triton
import triton.language as tl


@triton.jit
def _tile_of(item, num_cols):
    return item // num_cols, item % num_cols


@triton.jit
def _body(item, num_cols, offsets_ptr, BLOCK: tl.constexpr):
    row, col = _tile_of(item, num_cols)
    head = col // 4
    lanes = row * BLOCK + tl.arange(0, BLOCK)
    page = lanes // 16
    start = tl.load(offsets_ptr + row)
    slot = start % 16


@triton.jit
def kernel(num_cols, offsets_ptr, BLOCK: tl.constexpr):
    for item in range(tl.program_id(0), 1024, tl.num_programs(0)):
        _body(item, num_cols, offsets_ptr, BLOCK)
"""


def test_program_id_decomposition_in_helpers_the_kernel_calls_is_the_kernels():
    kernel = _signatures(DECOMPOSED, "k.py")["kernel"]
    found = {(d.axis, d.operator, d.operand) for d in kernel.decomposition}
    assert found == {(0, "//", "num_cols"), (0, "%", "num_cols"), (0, "//", "4")}
    assert kernel.program_id_axes == [0] and kernel.num_programs_axes == [0]


def test_launched_kernel_name_drops_template_arguments_that_span_lines():
    source = b"""
void host(int n, cudaStream_t stream) {
  vllm::gather_page<float, 576,
                    128><<<dim3(n), 128, 0, stream>>>(n);
}
"""
    (launch,) = _signatures(source, "b.cu")["host"].launches
    assert launch.kernel_normalised == "gather_page"


CUDA_BLOCKS = b"""
__global__ void k(const int* seq, float* out, const int H, const int C) {
  const int item = blockIdx.x;
  const int b = item / H;
  const int h = item % H;
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = tid / 32;
  const int batch = seq[item];
  const int half = batch / 2;
  const int row = (blockIdx.y * C + threadIdx.y) / 4;
  out[b * H + h + lane + half + row] = 0;
}
"""


def test_cpp_block_index_decomposition_is_of_the_work_index_only():
    kernel = _signatures(CUDA_BLOCKS, "csrc/k.cu")["k"]
    assert {(d.axis, d.operator, d.operand) for d in kernel.decomposition} == {(0, "//", "h"), (0, "%", "h")}
    assert [d.line for d in kernel.decomposition] == [4, 5]


def test_arguments_after_a_splat_bind_from_the_first_keyword_parameter():
    from portq.language.signatures import UNRESOLVED, bind_arguments

    params = ["x", "out", "stride_t", "stride_d", "rows", "width"]
    assert bind_arguments(["#0", "#1", "*", "-1", "width"], params) == tuple(params)
    # No keyword fixes where the positions end, or one may hide in **options.
    assert bind_arguments(["#0", "#1", "*", "-1"], params) == ("x", "out", UNRESOLVED)
    assert UNRESOLVED in bind_arguments(["#0", "#1", "*", "-1", "width", "**"], params)
    # A positional argument between two splats has no known position.
    assert UNRESOLVED in bind_arguments(["#0", "*", "?", "*", "-1", "width"], params)
