"""A C++ body whose reads move, not change (DESIGN §5: body-level, NEEDS_REVIEW, never REAL_GAP):

- a selector's parameter read only through a function-like macro of the same file that the body
  invokes (``if (n == 1) return k<1>; ...`` → ``#define inst(v) if (n == v) return k<v>`` and
  ``inst(1); inst(2); ...``) is still read: the macro's expansion reads it (``dead-input`` must not
  fire). A selector that truly stops reading it stays REAL_GAP.
- a kernel whose body moves (and changes) into a ``__device__`` helper of the same file reads the
  block indices that helper reads: its program-id axes are the helper's too (``program-decomposition`` must not
  fire). A kernel that stops reading an axis stays REAL_GAP.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

SELECTOR = '''\
namespace norm {

typedef void (*fp_norm_kernel)(const float*, float*, int);

template<int per_warp>
__global__ void NormKernel(const float* x, float* y, int dims)
{
    y[blockIdx.x * dims + threadIdx.x] = x[blockIdx.x * dims + threadIdx.x] * per_warp;
}

fp_norm_kernel pickNormKernel(const int per_warp)
{
    if (per_warp == 1) return NormKernel<1>;
    if (per_warp == 2) return NormKernel<2>;
    return NULL;
}

}  // namespace norm
'''
SELECTOR_MACRO = SELECTOR.replace('''fp_norm_kernel pickNormKernel(const int per_warp)
{
    if (per_warp == 1) return NormKernel<1>;
    if (per_warp == 2) return NormKernel<2>;
''', '''#define norm_instance(n) \\
    if (per_warp == n) return NormKernel<n>

fp_norm_kernel pickNormKernel(const int per_warp)
{
    norm_instance(1);
    norm_instance(2);
    norm_instance(3);
    norm_instance(4);
''')
SELECTOR_UNREAD = SELECTOR.replace('''    if (per_warp == 1) return NormKernel<1>;
    if (per_warp == 2) return NormKernel<2>;
    return NULL;''', '''    return NormKernel<1>;''').replace("namespace norm {", '''namespace norm {

#define norm_instance(n) \\
    if (per_warp == n) return NormKernel<n>''')

SELECTOR_PORT = {"kernels/norm.cu": (
    "typedef void (*fp_kernel)(const float*, float*, int);\n\n"
    "template<int per_warp>\n__global__ void norm_kernel(const float* x, float* y, int dims)\n"
    "{\n    y[blockIdx.x * dims + threadIdx.x] = x[blockIdx.x * dims + threadIdx.x] * per_warp;\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::pickNormKernel\n"
    "fp_kernel pick_norm_kernel(const int per_warp)\n{\n"
    "    if (per_warp == 1) return norm_kernel<1>;\n    if (per_warp == 2) return norm_kernel<2>;\n"
    "    return NULL;\n}\n\n"
    "void run_norm(const float* x, float* y, int dims, int rows)\n{\n"
    "    fp_kernel k = pick_norm_kernel(dims / 32);\n    k<<<rows, 32>>>(x, y, dims);\n}\n")}

KERNEL = '''\
namespace norm {

__global__ void RotateKernel(float* x, const float* s, int dims)
{
    int row = blockIdx.x;
    int head = blockIdx.y;
    x[(row * gridDim.y + head) * dims + threadIdx.x] *= s[threadIdx.x];
}

void rotate(float* x, const float* s, int dims, int rows, int heads)
{
    dim3 grid(rows, heads);
    RotateKernel<<<grid, dims>>>(x, s, dims);
}

}  // namespace norm
'''
KERNEL_HELPER = KERNEL.replace('''__global__ void RotateKernel(float* x, const float* s, int dims)
{
    int row = blockIdx.x;
    int head = blockIdx.y;
    x[(row * gridDim.y + head) * dims + threadIdx.x] *= s[threadIdx.x];
}''', '''__device__ void rotate_row(float* x, const float* s, int dims)
{
    int row = blockIdx.x;
    int head = blockIdx.y;
    float v = x[(row * gridDim.y + head) * dims + threadIdx.x];
    x[(row * gridDim.y + head) * dims + threadIdx.x] = v * s[threadIdx.x];
}

__global__ void RotateKernel(float* x, const float* s, int dims)
{
    rotate_row(x, s, dims);
}''')
KERNEL_ONE_AXIS = KERNEL.replace("    int head = blockIdx.y;\n", "    int head = 0;\n")

KERNEL_PORT = {"kernels/rotate.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::RotateKernel\n"
    "__global__ void rotate_kernel(float* x, const float* s, int dims)\n{\n"
    "    int row = blockIdx.x;\n    int head = blockIdx.y;\n"
    "    x[(row * gridDim.y + head) * dims + threadIdx.x] *= s[threadIdx.x];\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::rotate\n"
    "void launch_rotate(float* x, const float* s, int dims, int rows, int heads)\n{\n"
    "    dim3 grid(rows, heads);\n    rotate_kernel<<<grid, dims>>>(x, s, dims);\n}\n\n"
    "void run_rotate(float* x, const float* s, int dims, int rows, int heads)\n{\n"
    "    launch_rotate(x, s, dims, rows, heads);\n}\n")}


def _symbol(tmp_path, before, after, port, name):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("change", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith(name))


def test_a_parameter_read_through_a_macro_the_body_invokes_is_not_dead(tmp_path):
    selector = _symbol(tmp_path, SELECTOR, SELECTOR_MACRO, SELECTOR_PORT, "pickNormKernel")
    assert selector.verdict != REAL_GAP, selector.reason
    assert "dead-input" not in selector.rules, selector.rules


def test_a_selector_that_stops_reading_its_parameter_is_still_a_gap(tmp_path):
    selector = _symbol(tmp_path, SELECTOR, SELECTOR_UNREAD, SELECTOR_PORT, "pickNormKernel")
    assert selector.verdict == REAL_GAP, selector.reason
    assert "dead-input" in selector.rules, selector.rules


def test_a_kernel_body_moved_into_a_device_helper_keeps_its_block_axes(tmp_path):
    kernel = _symbol(tmp_path, KERNEL, KERNEL_HELPER, KERNEL_PORT, "RotateKernel")
    assert kernel.verdict != REAL_GAP, kernel.reason
    assert "program-decomposition" not in kernel.rules, kernel.rules


def test_a_kernel_that_stops_reading_an_axis_is_still_a_gap(tmp_path):
    kernel = _symbol(tmp_path, KERNEL, KERNEL_ONE_AXIS, KERNEL_PORT, "RotateKernel")
    assert kernel.verdict == REAL_GAP, kernel.reason
