"""A C++ parameter whose only read is the initializer of a local nothing reads (``int off = b * mp + head;``
and no other mention of ``off``) feeds nothing the kernel computes: it is as dead before as after a commit
that drops that line, so ``dead-input`` does not fire (the commit is a body change, NEEDS_REVIEW). A kernel
that stops reading a parameter it used for its result stays REAL_GAP (``dead-input``).

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

KERNEL = '''\
namespace norm {

__global__ void ShiftKernel(float* x, const float* s, int total, int heads, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int shifted = i * heads + offset;
    if (i < total) x[i] *= s[i];
}

}  // namespace norm
'''
# The commit also changes the result, so it is more than an unread local removed.
DROPPED = KERNEL.replace("    int shifted = i * heads + offset;\n", "").replace("x[i] *= s[i];", "x[i] *= 2.0f * s[i];")
# The neighbour: the kernel used `offset` for its result, and stops.
USED = KERNEL.replace("x[i] *= s[i];", "x[i] *= s[shifted % total];")
USED_DROPPED = USED.replace("    int shifted = i * heads + offset;\n", "    int shifted = i * heads;\n").replace(
    "x[i] *=", "x[i] *= 2.0f *")

PORT = {"kernels/shift.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::ShiftKernel\n"
    "__global__ void shift_kernel(float* x, const float* s, int total, int heads, int offset)\n{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    int shifted = i * heads + offset;\n"
    "    if (i < total) x[i] *= s[shifted % total];\n}\n\n"
    "void run_shift(float* x, const float* s, int total, int heads, int offset)\n{\n"
    "    shift_kernel<<<(total + 255) / 256, 256>>>(x, s, total, heads, offset);\n}\n")}


def _entry(tmp_path, before, after):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("change", files={SOURCE: after})], PORT, matrix=MATRIX_WITH_NORM)
    return verdicts[1]


def test_dropping_a_read_into_an_unread_local_is_no_dead_input(tmp_path):
    entry = _entry(tmp_path, KERNEL, DROPPED)
    assert entry.verdict != REAL_GAP, entry.reason
    assert "dead-input" not in entry.rules, entry.rules


def test_a_kernel_that_stops_reading_an_input_it_used_is_still_a_gap(tmp_path):
    entry = _entry(tmp_path, USED, USED_DROPPED)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "dead-input" in entry.rules, entry.rules


# ``template-argument``: a run-time argument the launcher now gives as a template argument.
LOOP = '''\
namespace norm {

__global__ void LoopKernel(float* x, int total, int iterations)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < iterations; k++) { if (i < total) x[i] *= 2.0f; }
}

void loop(float* x, int total, int steps)
{
    int iterations = (steps + 1) / 2;
    LoopKernel<<<(total + 255) / 256, 256>>>(x, total, iterations);
}

}  // namespace norm
'''
LOOP_TEMPLATED = LOOP.replace('''__global__ void LoopKernel(float* x, int total, int iterations)''',
                              '''template <int iterations>\n__global__ void LoopKernel(float* x, int total)''').replace(
    '''    int iterations = (steps + 1) / 2;
    LoopKernel<<<(total + 255) / 256, 256>>>(x, total, iterations);''', '''    constexpr int iterations = 4;
    if (steps <= 8) LoopKernel<iterations><<<(total + 255) / 256, 256>>>(x, total);''')
LOOP_DROPPED = LOOP.replace("LoopKernel<<<(total + 255) / 256, 256>>>(x, total, iterations);",
                            "LoopKernel<<<(total + 255) / 256, 256>>>(x, total);").replace(
    "__global__ void LoopKernel(float* x, int total, int iterations)", "__global__ void LoopKernel(float* x, int total)").replace(
    "k < iterations;", "k < 4;")
LOOP_PORT = {"kernels/loop.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::LoopKernel\n"
    "__global__ void loop_kernel(float* x, int total, int iterations)\n{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    for (int k = 0; k < iterations; k++) { if (i < total) x[i] *= 2.0f; }\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::loop\n"
    "void launch_loop(float* x, int total, int steps)\n{\n"
    "    int iterations = (steps + 1) / 2;\n"
    "    loop_kernel<<<(total + 255) / 256, 256>>>(x, total, iterations);\n}\n\n"
    "void run_loop(float* x, int total, int steps)\n{\n    launch_loop(x, total, steps);\n}\n")}


def _loop(tmp_path, after):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: LOOP}),
                   CommitSpec("change", files={SOURCE: after})], LOOP_PORT, matrix=MATRIX_WITH_NORM)
    return verdicts[1]


def test_an_argument_now_given_as_a_template_argument_is_for_a_reader(tmp_path):
    entry = _loop(tmp_path, LOOP_TEMPLATED)
    assert entry.verdict != REAL_GAP, entry.reason
    assert "template-argument" in entry.rules, entry.rules


def test_an_argument_the_kernel_no_longer_receives_is_still_a_gap(tmp_path):
    entry = _loop(tmp_path, LOOP_DROPPED)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "template-argument" not in entry.rules, entry.rules
