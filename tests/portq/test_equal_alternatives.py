"""A preprocessor conditional whose branches are one program (``equal-alternatives``): a commit that drops
``#ifdef VERSION_NEW`` / ``at::IntArrayRef shape,`` / ``#else`` / ``at::IntList shape,`` / ``#endif`` down to
the first branch removes an alternative every build compiled alike, since ``at::IntList`` is the
deprecated alias torch documents for ``at::IntArrayRef`` (both ``ArrayRef<int64_t>``): the file has the
same tokens before and after once such conditionals are replaced by a branch, so every touched
definition, ported or not, is cosmetic, also where tree-sitter cannot parse a parameter list split by the
directives. Branches that differ (another type, another statement), or a file that changes in anything
else too, stay flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

SHAPE = "    at::IntArrayRef shape,\n"
BOTH = "#ifdef VERSION_NEW\n    at::IntArrayRef shape,\n#else\n    at::IntList shape,\n#endif\n"
BEFORE = f'''\
#include "row_norm.h"

namespace norm {{

__global__ void ScaleKernel(const float* x, float* y, int dims)
{{
    y[blockIdx.x * dims + threadIdx.x] = x[blockIdx.x * dims + threadIdx.x] * 2.0f;
}}

void scaleRows(
    const float* x,
    float* y,
{BOTH}    int rows)
{{
    int dims = static_cast<int>(shape[0]);
    ScaleKernel<<<rows, 256>>>(x, y, dims);
}}

void checkRows(
{BOTH}    int rows);

}}  // namespace norm
'''
AFTER = BEFORE.replace(BOTH, SHAPE)
OTHER_TYPE = BEFORE.replace("    at::IntList shape,\n", "    std::vector<int64_t> shape,\n")
OTHER_STATEMENT_BEFORE = BEFORE.replace(
    "    int dims = static_cast<int>(shape[0]);\n",
    "#ifdef VERSION_NEW\n    int dims = static_cast<int>(shape[0]);\n#else\n    int dims = static_cast<int>(shape[1]);\n#endif\n")
OTHER_STATEMENT_AFTER = OTHER_STATEMENT_BEFORE.replace(BOTH, SHAPE).replace(
    "#ifdef VERSION_NEW\n    int dims = static_cast<int>(shape[0]);\n#else\n    int dims = static_cast<int>(shape[1]);\n#endif\n",
    "    int dims = static_cast<int>(shape[0]);\n")
AND_MORE = AFTER.replace("* 2.0f", "* 3.0f")

PORT = {"kernels/scale.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::ScaleKernel\n"
    "__global__ void scale_kernel(const float* x, float* y, int dims)\n{\n"
    "    y[blockIdx.x * dims + threadIdx.x] = x[blockIdx.x * dims + threadIdx.x] * 2.0f;\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::scaleRows\n"
    "void scale_rows(const float* x, float* y, at::IntArrayRef shape, int rows)\n{\n"
    "    scale_kernel<<<rows, 256>>>(x, y, static_cast<int>(shape[0]));\n}\n\n"
    "void run_scale(const float* x, float* y, at::IntArrayRef shape, int rows)\n{\n"
    "    scale_rows(x, y, shape, rows);\n}\n")}


def _scan(tmp_path, after, before=BEFORE):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("change", files={SOURCE: after})], PORT, matrix=MATRIX_WITH_NORM)
    entry = verdicts[1]
    return entry, {s.symbol: s for s in entry.symbols if s.path == SOURCE}


def test_a_conditional_whose_branches_name_one_type_removed_is_cosmetic(tmp_path):
    entry, symbols = _scan(tmp_path, AFTER)
    host = symbols["norm::scaleRows"]
    assert host.verdict == NOT_APPLICABLE and host.justification == "cosmetic", host.reason
    assert "equal-alternatives" in host.rules, host.rules
    assert "VERSION_NEW" in host.reason, host.reason
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_branches_of_another_type_stay_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, AFTER, before=OTHER_TYPE)
    assert "equal-alternatives" not in symbols["norm::scaleRows"].rules, symbols["norm::scaleRows"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_branches_with_another_statement_stay_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, OTHER_STATEMENT_AFTER, before=OTHER_STATEMENT_BEFORE)
    assert "equal-alternatives" not in symbols["norm::scaleRows"].rules, symbols["norm::scaleRows"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_file_that_changes_in_anything_else_stays_flagged(tmp_path):
    entry, _ = _scan(tmp_path, AND_MORE)
    assert entry.verdict in FLAGGED, entry.reason
    assert all("equal-alternatives" not in s.rules for s in entry.symbols), [s.rules for s in entry.symbols]


def test_a_flipped_test_of_such_a_conditional_is_cosmetic(tmp_path):
    entry, symbols = _scan(tmp_path, BEFORE.replace("#ifdef VERSION_NEW", "#ifndef VERSION_NEW"))
    host = symbols["norm::scaleRows"]
    assert host.verdict == NOT_APPLICABLE and "equal-alternatives" in host.rules, host.reason
