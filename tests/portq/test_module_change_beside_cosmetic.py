"""A commit that changes a module-level constant, flag, alias or import a ported definition reads, and in the
same commit changes that definition only in form (a consistent renaming of its locals, a comment), is flagged:
the definition's own change is cosmetic, but what it reads changed beside it, in its own file or in the module
it imports from (relative, aliased). The form-only rules decide the definition's text, never the entry.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE
from tests.portq.test_module_level_use import ATTN, MATRIX, UTILS, tree

ATTN_RELATIVE = ATTN.format(imports="from .utils import exp, IS_HOPPER as hopper", exp="exp", hopper="hopper")
# the kernel's local renamed consistently: cosmetic on its own
RENAMED = ATTN_RELATIVE.replace("    x = tl.load(x_ptr + offs)\n    tl.store(y_ptr + offs, exp(x))",
                                "    xv = tl.load(x_ptr + offs)\n    tl.store(y_ptr + offs, exp(xv))")
SCALED = ATTN_RELATIVE.replace("import triton.language as tl\n\n", "import triton.language as tl\n\nSCALE = 2\n\n", 1) \
    .replace("exp(x))", "exp(x) * SCALE)")


def _entry(tmp_path, base: dict[str, str], after: dict[str, str]):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=base), CommitSpec("change", files=after)],
                                   tree(), matrix=MATRIX)
    return verdicts[1]


def test_a_local_renaming_alone_is_cosmetic(tmp_path):
    entry = _entry(tmp_path, {"src/pkg/ops/utils.py": UTILS, "src/pkg/ops/attn.py": ATTN_RELATIVE},
                   {"src/pkg/ops/attn.py": RENAMED})
    assert entry.verdict == NOT_APPLICABLE, (entry.rules, entry.reason)


def test_a_flag_changed_in_the_imported_module_beside_a_renaming_stays_flagged(tmp_path):
    entry = _entry(tmp_path, {"src/pkg/ops/utils.py": UTILS, "src/pkg/ops/attn.py": ATTN_RELATIVE},
                   {"src/pkg/ops/utils.py": UTILS.replace("CC >= 9", "CC == 9"), "src/pkg/ops/attn.py": RENAMED})
    assert entry.verdict in FLAGGED, (entry.rules, entry.reason)


def test_an_alias_rebound_in_the_imported_module_beside_a_renaming_stays_flagged(tmp_path):
    entry = _entry(tmp_path, {"src/pkg/ops/utils.py": UTILS, "src/pkg/ops/attn.py": ATTN_RELATIVE},
                   {"src/pkg/ops/utils.py": UTILS.replace("exp = tl.exp", "exp = tl.exp2"),
                    "src/pkg/ops/attn.py": RENAMED})
    assert entry.verdict in FLAGGED, (entry.rules, entry.reason)


def test_a_constant_of_the_same_file_changed_beside_a_renaming_stays_flagged(tmp_path):
    renamed = SCALED.replace("    x = tl.load(x_ptr + offs)\n    tl.store(y_ptr + offs, exp(x) * SCALE)",
                             "    xv = tl.load(x_ptr + offs)\n    tl.store(y_ptr + offs, exp(xv) * SCALE)")
    entry = _entry(tmp_path, {"src/pkg/ops/utils.py": UTILS, "src/pkg/ops/attn.py": SCALED},
                   {"src/pkg/ops/attn.py": renamed.replace("SCALE = 2", "SCALE = 3")})
    assert entry.verdict in FLAGGED, (entry.rules, entry.reason)


def test_an_import_taken_from_another_module_beside_a_renaming_stays_flagged(tmp_path):
    moved = RENAMED.replace("from .utils import exp, IS_HOPPER as hopper",
                            "from .utils import IS_HOPPER as hopper\nfrom .fast import exp")
    entry = _entry(tmp_path, {"src/pkg/ops/utils.py": UTILS, "src/pkg/ops/attn.py": ATTN_RELATIVE},
                   {"src/pkg/ops/fast.py": "import triton.language as tl\n\nexp = tl.exp2\n",
                    "src/pkg/ops/attn.py": moved})
    assert entry.verdict in FLAGGED, (entry.rules, entry.reason)


# C++: a file-scope constant the kernel reads changes while the kernel itself only gains a comment.
KERNEL = '''\\
#include "row_norm.h"

namespace norm {

constexpr int kUnroll = 4;

template<class T>
__global__ void RowNormKernel(T* out, const T* x, const T* weights, int dims, float eps)
{
    float acc = 0.0f;
    for (int i = 0; i < dims; i += kUnroll) {
        acc += x[i] * x[i];
    }
    out[blockIdx.x] = acc * eps;
}

template<class T>
void invokeRowNorm(T* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st)
{
    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps);
}

}  // namespace norm
'''
COMMENTED = KERNEL.replace("    float acc = 0.0f;\n", "    // the sum of squares\n    float acc = 0.0f;\n")
PORT = (
    f"// portq: ports vllm:{SOURCE}::norm::RowNormKernel\n"
    "template<class T>\n"
    "__global__ void rms_norm_kernel(T* y, const T* x, const T* w, int dims, float eps)\n{\n"
    "    float acc = 0.0f;\n    for (int i = 0; i < dims; i += 4) {\n        acc += x[i] * x[i];\n    }\n"
    "    y[blockIdx.x] = acc * eps;\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::invokeRowNorm\n"
    "template<class T>\n"
    "void rms_norm(T* y, const T* x, const T* w, int dims, int num, float eps, cudaStream_t st)\n"
    "{\n    rms_norm_kernel<<<num, dims, 0, st>>>(y, x, w, dims, eps);\n}\n\n"
    "void run_norm(float* y, const float* x, const float* w, int dims, int num, cudaStream_t st)\n"
    "{\n    rms_norm(y, x, w, dims, num, 1e-6f, st);\n}\n"
)


def _cpp_entry(tmp_path, after):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: KERNEL}),
                   CommitSpec("change", files={SOURCE: after})], {"kernels/kv_cache/row_norm.cu": PORT},
        matrix=MATRIX_WITH_NORM)
    return verdicts[1]


def test_a_comment_alone_in_a_cpp_kernel_is_not_applicable(tmp_path):
    entry = _cpp_entry(tmp_path, COMMENTED)
    assert entry.verdict == NOT_APPLICABLE, (entry.rules, entry.reason)


def test_a_file_scope_constant_changed_beside_a_comment_stays_flagged(tmp_path):
    entry = _cpp_entry(tmp_path, COMMENTED.replace("kUnroll = 4;", "kUnroll = 8;"))
    assert entry.verdict in FLAGGED, (entry.rules, entry.reason)


def test_a_macro_changed_beside_a_comment_stays_flagged(tmp_path):
    defined = KERNEL.replace("constexpr int kUnroll = 4;", "#define UNROLL 4")
    after = COMMENTED.replace("constexpr int kUnroll = 4;", "#define UNROLL 8").replace("i += kUnroll", "i += UNROLL")
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: defined.replace("i += kUnroll",
                                                                                             "i += UNROLL")}),
                   CommitSpec("change", files={SOURCE: after})], {"kernels/kv_cache/row_norm.cu": PORT},
        matrix=MATRIX_WITH_NORM)
    assert verdicts[1].verdict in FLAGGED, (verdicts[1].rules, verdicts[1].reason)
