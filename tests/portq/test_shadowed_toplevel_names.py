"""A C++ file-scope line naming a word that a ported definition declares for itself (``toplevel-use``):
a ported kernel whose first mention of `granularity` is its body's own `constexpr int granularity = 16;`
reads its local, never a file-scope `granularity`, so a commit that adds
`namespace other { constexpr int granularity = 16; }` for a new unported sibling changes nothing it
reads: NOT_APPLICABLE/not-ported. A ported definition that reads the file-scope name (no local of its
own, or a use before its local is declared) stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

LOCAL = '''\
namespace norm {

template <typename T>
__global__ void ScaleKernel(T* x, const T* s, int total)
{
    constexpr int granularity = 16;
    constexpr int threads = 256;
    int i = (blockIdx.x * threads + threadIdx.x) * (granularity / sizeof(T));
    if (i < total) x[i] *= s[i];
}

}  // namespace norm
'''
SIBLING = '''
namespace other {
constexpr int threads = 512;
constexpr int granularity = 8;
}  // namespace other

template <typename T>
__global__ void OtherKernel(T* x, int total)
{
    int i = (blockIdx.x * other::threads + threadIdx.x) * (other::granularity / sizeof(T));
    if (i < total) x[i] = 0;
}
'''
# The ported kernel reads a file-scope constant of that name: a change to it is the port's.
SHARED = '''\
namespace norm {

constexpr int granularity = 16;

template <typename T>
__global__ void ScaleKernel(T* x, const T* s, int total)
{
    int i = (blockIdx.x * 256 + threadIdx.x) * (granularity / sizeof(T));
    if (i < total) x[i] *= s[i];
}

}  // namespace norm
'''
# A use before the local of the same name is declared reads the file-scope one.
USED_FIRST = SHARED.replace("    int i = (blockIdx.x * 256", "    int g = granularity;\n    constexpr int granularity = 8;\n"
                            "    int i = (blockIdx.x * g")

PORT = {"kernels/scale.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::ScaleKernel\n"
    "template <typename T>\n__global__ void scale_kernel(T* x, const T* s, int total)\n{\n"
    "    int i = (blockIdx.x * 256 + threadIdx.x) * (16 / sizeof(T));\n    if (i < total) x[i] *= s[i];\n}\n\n"
    "void run_scale(float* x, const float* s, int total)\n{\n"
    "    scale_kernel<<<(total + 255) / 256, 256>>>(x, s, total);\n}\n")}


def _entry(tmp_path, before, after):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("change", files={SOURCE: after})], PORT, matrix=MATRIX_WITH_NORM)
    return verdicts[1]


def test_a_sibling_namespace_naming_what_the_kernel_declares_for_itself_is_not_ported(tmp_path):
    entry = _entry(tmp_path, LOCAL, LOCAL + SIBLING)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-ported"), entry.reason


def test_a_changed_file_scope_constant_the_kernel_reads_is_still_flagged(tmp_path):
    entry = _entry(tmp_path, SHARED, SHARED.replace("constexpr int granularity = 16;", "constexpr int granularity = 8;"))
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules


def test_a_use_before_the_local_of_that_name_is_still_flagged(tmp_path):
    entry = _entry(tmp_path, USED_FIRST, USED_FIRST.replace("constexpr int granularity = 16;",
                                                            "constexpr int granularity = 4;"))
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules
