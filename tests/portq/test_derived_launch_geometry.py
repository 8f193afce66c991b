"""A launch whose geometry changes only through values derived from what the launcher already
receives (``derived-geometry``): the threads per block a tuning constant sets, the elements one thread
reads per access (from the element type's size), or a count computed from the inputs the grid
already read, changed together with the kernel's indexing. No caller supplies or selects any of it,
and the grid covers the same inputs on the same axes, so it is an implementation detail for a
reader (DESIGN §5), NEEDS_REVIEW, never REAL_GAP against a port that keeps the old geometry. With a
block of several axes, each grid axis counts blocks of the block's extent on that axis.

Unsound neighbours stay REAL_GAP: a grid that starts to read an input it did not read (an existing
parameter, or a new one the launcher gains), a grid that no longer counts blocks of the launch's own
block size, a grid capped by a device query, and a grid whose axes swap.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

SCALE = '''\
namespace norm {

#define SCALE_THREADS 1024

template <typename T>
__global__ void ScaleKernel(T* x, const T* s, int total, int dims)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) x[i] *= s[i % dims];
}

template <typename T>
void scale(T* x, const T* s, int rows, int dims, int heads, cudaStream_t st)
{
    int total = rows * (dims / 4);
    dim3 grid((total - 1) / SCALE_THREADS + 1);
    ScaleKernel<<<grid, SCALE_THREADS, 0, st>>>(x, s, total, dims / 4);
}

}  // namespace norm
'''
# Loads of 16 bytes: the grid counts elements per access, from the element type's size.
SCALE_PER_ACCESS = SCALE.replace('''    int total = rows * (dims / 4);
    dim3 grid((total - 1) / SCALE_THREADS + 1);
    ScaleKernel<<<grid, SCALE_THREADS, 0, st>>>(x, s, total, dims / 4);''', '''    constexpr int threads = 1024;
    constexpr int granularity = 16;
    const int total = rows * dims;
    const int per_block = threads * (granularity / sizeof(T));
    dim3 grid((total + per_block - 1) / per_block);
    ScaleKernel<<<grid, threads, 0, st>>>(x, s, total, dims);''').replace(
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n",
    "    int i = (blockIdx.x * blockDim.x + threadIdx.x) * (16 / sizeof(T));\n")
# A tuning constant drops, and the grid divides by what it now covers per block.
SCALE_TUNED = SCALE.replace("#define SCALE_THREADS 1024", "#define SCALE_THREADS 256").replace(
    "    dim3 grid((total - 1) / SCALE_THREADS + 1);", "    dim3 grid((total - 1) / (SCALE_THREADS / 32) + 1);")
# Neighbours: the grid reads an input it did not read before; a new input; swapped axes.
SCALE_READS_HEADS = SCALE.replace("    dim3 grid((total - 1) / SCALE_THREADS + 1);",
                                  "    dim3 grid(((total - 1) / SCALE_THREADS + 1) * heads);")
SCALE_NEW_INPUT = SCALE.replace("int heads, cudaStream_t st)", "int heads, int groups, cudaStream_t st)").replace(
    "    dim3 grid((total - 1) / SCALE_THREADS + 1);", "    dim3 grid((total - 1) / SCALE_THREADS + groups);")
# The grid divides by a constant the launch does not give the kernel: blocks no longer match what they cover.
SCALE_UNTIED = SCALE.replace("    dim3 grid((total - 1) / SCALE_THREADS + 1);", "    dim3 grid((total - 1) / 512 + 1);")
# The grid is capped by a device query: a persistent launch, not derived from what the launcher receives.
SCALE_CAPPED = SCALE.replace("    dim3 grid((total - 1) / SCALE_THREADS + 1);",
                             "    const int num_sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;\n"
                             "    dim3 grid(std::min((total - 1) / SCALE_THREADS + 1, 4 * num_sms));")

PORT = {"kernels/scale.cu": (
    "#define SCALE_THREADS 1024\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::ScaleKernel\n"
    "template <typename T>\n__global__ void scale_kernel(T* x, const T* s, int total, int dims)\n{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < total) x[i] *= s[i % dims];\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::scale\n"
    "template <typename T>\nvoid launch_scale(T* x, const T* s, int rows, int dims, int heads, cudaStream_t st)\n{\n"
    "    int total = rows * (dims / 4);\n    dim3 grid((total - 1) / SCALE_THREADS + 1);\n"
    "    scale_kernel<<<grid, SCALE_THREADS, 0, st>>>(x, s, total, dims / 4);\n}\n\n"
    "void run_scale(float* x, const float* s, int rows, int dims, int heads, cudaStream_t st)\n{\n"
    "    launch_scale(x, s, rows, dims, heads, st);\n}\n")}

ROTATE = '''\
namespace norm {

__global__ void RotateKernel(float* x, const float* s, int dims)
{
    x[(blockIdx.x * gridDim.y + blockIdx.y) * dims + threadIdx.x] *= s[threadIdx.x];
}

void rotate(float* x, const float* s, int dims, int rows, int heads)
{
    dim3 grid(rows, heads);
    RotateKernel<<<grid, dims>>>(x, s, dims);
}

}  // namespace norm
'''
ROTATE_SWAPPED = ROTATE.replace("    dim3 grid(rows, heads);", "    dim3 grid(heads, rows);")
ROTATE_PORT = {"kernels/rotate.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::RotateKernel\n"
    "__global__ void rotate_kernel(float* x, const float* s, int dims)\n{\n"
    "    x[(blockIdx.x * gridDim.y + blockIdx.y) * dims + threadIdx.x] *= s[threadIdx.x];\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::rotate\n"
    "void launch_rotate(float* x, const float* s, int dims, int rows, int heads)\n{\n"
    "    dim3 grid(rows, heads);\n    rotate_kernel<<<grid, dims>>>(x, s, dims);\n}\n\n"
    "void run_rotate(float* x, const float* s, int dims, int rows, int heads)\n{\n"
    "    launch_rotate(x, s, dims, rows, heads);\n}\n")}


def _entry(tmp_path, before, after, port=PORT):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("change", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return verdicts[1]


def test_a_grid_counted_in_elements_per_access_is_for_a_reader(tmp_path):
    entry = _entry(tmp_path, SCALE, SCALE_PER_ACCESS)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "derived-geometry" in entry.rules, entry.rules


def test_a_grid_from_a_changed_tuning_constant_is_for_a_reader(tmp_path):
    entry = _entry(tmp_path, SCALE, SCALE_TUNED)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "derived-geometry" in entry.rules, entry.rules


def test_a_grid_that_starts_to_read_another_input_is_still_a_gap(tmp_path):
    entry = _entry(tmp_path, SCALE, SCALE_READS_HEADS)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "derived-geometry" not in entry.rules, entry.rules


def test_a_grid_that_reads_a_new_caller_input_is_still_a_gap(tmp_path):
    entry = _entry(tmp_path, SCALE, SCALE_NEW_INPUT)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "derived-geometry" not in entry.rules, entry.rules


def test_a_grid_no_longer_counting_the_launch_block_is_still_a_gap(tmp_path):
    entry = _entry(tmp_path, SCALE, SCALE_UNTIED)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "derived-geometry" not in entry.rules, entry.rules


def test_a_grid_capped_by_a_device_query_is_still_a_gap(tmp_path):
    entry = _entry(tmp_path, SCALE, SCALE_CAPPED)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "derived-geometry" not in entry.rules, entry.rules


def test_swapped_grid_axes_are_still_a_gap(tmp_path):
    entry = _entry(tmp_path, ROTATE, ROTATE_SWAPPED, ROTATE_PORT)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "derived-geometry" not in entry.rules, entry.rules


# A two-dimensional block: each axis of the grid counts blocks of the block's own extent on that axis.
TILE = '''\
namespace norm {

const int TILE_X = 32;
const int TILE_Y = 8;
const int SPAN_X = 4;

__global__ void TileKernel(float* x, const float* s, int rows, int cols)
{
    int c = (blockIdx.x * SPAN_X) * TILE_X + threadIdx.x;
    int r = blockIdx.y * TILE_Y + threadIdx.y;
    if (r < rows && c < cols) x[r * cols + c] *= s[c];
}

void tile(float* x, const float* s, int rows, int cols)
{
    dim3 threads(TILE_X, TILE_Y, 1);
    dim3 blocks
    (
        (cols + TILE_X - 1) / TILE_X / SPAN_X,
        (rows + TILE_Y - 1) / TILE_Y,
        1
    );
    TileKernel<<<blocks, threads>>>(x, s, rows, cols);
}

}  // namespace norm
'''
TILE_ROUNDED = TILE.replace("        (cols + TILE_X - 1) / TILE_X / SPAN_X,",
                            "        ((cols + TILE_X - 1) / TILE_X + TILE_X - 1) / SPAN_X,")
# Neighbours: the second axis stops counting the block's extent on it; the first axis starts to read rows.
TILE_UNTIED = TILE.replace("        (rows + TILE_Y - 1) / TILE_Y,", "        (rows + 15) / 16,")
TILE_READS_ROWS = TILE.replace("        (cols + TILE_X - 1) / TILE_X / SPAN_X,",
                               "        (cols + TILE_X - 1) / TILE_X / SPAN_X + rows,")
TILE_PORT = {"kernels/tile.cu": (
    "const int TILE_X = 32;\nconst int TILE_Y = 8;\nconst int SPAN_X = 4;\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::TileKernel\n"
    "__global__ void tile_kernel(float* x, const float* s, int rows, int cols)\n{\n"
    "    int c = (blockIdx.x * SPAN_X) * TILE_X + threadIdx.x;\n    int r = blockIdx.y * TILE_Y + threadIdx.y;\n"
    "    if (r < rows && c < cols) x[r * cols + c] *= s[c];\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::tile\n"
    "void launch_tile(float* x, const float* s, int rows, int cols)\n{\n"
    "    dim3 threads(TILE_X, TILE_Y, 1);\n"
    "    dim3 blocks((cols + TILE_X - 1) / TILE_X / SPAN_X, (rows + TILE_Y - 1) / TILE_Y, 1);\n"
    "    tile_kernel<<<blocks, threads>>>(x, s, rows, cols);\n}\n\n"
    "void run_tile(float* x, const float* s, int rows, int cols)\n{\n    launch_tile(x, s, rows, cols);\n}\n")}


def test_a_grid_counting_each_axis_of_a_two_dimensional_block_is_for_a_reader(tmp_path):
    entry = _entry(tmp_path, TILE, TILE_ROUNDED, TILE_PORT)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "derived-geometry" in entry.rules, entry.rules


def test_a_grid_axis_no_longer_counting_its_block_extent_is_still_a_gap(tmp_path):
    entry = _entry(tmp_path, TILE, TILE_UNTIED, TILE_PORT)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "derived-geometry" not in entry.rules, entry.rules


def test_a_two_dimensional_grid_that_starts_to_read_another_input_is_still_a_gap(tmp_path):
    entry = _entry(tmp_path, TILE, TILE_READS_ROWS, TILE_PORT)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "derived-geometry" not in entry.rules, entry.rules
