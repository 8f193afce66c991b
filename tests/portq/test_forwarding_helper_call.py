"""A call respelled through a forwarding helper (``forwarding-helper-call``): a commit that adds to a
header the file includes a helper whose whole body returns a library function's call on its parameters,
in order, and respells that call in a type's member initialiser as the helper's, each argument of the
helper's parameter type (a `sizeof` for `size_t`), computes what it did: NOT_APPLICABLE/``cosmetic``.
A helper that does anything more, one the default build does not compile, or another argument stays
flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

TRAITS = '''\
struct ScaleTraits {
    static constexpr int kLanes = 32;
    static constexpr int kBytes = std::max({sizeof(float), sizeof(int)});
};
'''
BEFORE = f'''\
#include <algorithm>

#include "row_norm.h"

namespace norm {{

{TRAITS}
__global__ void ScaleKernel(const float* x, float* y, int dims)
{{
    __shared__ char scratch[ScaleTraits::kBytes];
    int row = blockIdx.x;
    for (int t = threadIdx.x; t < dims; t += ScaleTraits::kLanes) {{
        y[row * dims + t] = x[row * dims + t] * 2.0f + scratch[0] * 0.0f;
    }}
}}

}}  // namespace norm
'''
HELPER = '''
constexpr size_t widest(std::initializer_list<size_t> sizes)
{
    return std::max(sizes);
}
'''
OTHER_BUILD_HELPER = "#ifndef USE_GPU_B\n" + HELPER + "#else\n" + HELPER.replace(
    "return std::max(sizes);", "return *std::max_element(sizes.begin(), sizes.end());") + "#endif\n"
MORE_HELPER = HELPER.replace("return std::max(sizes);", "return std::max(sizes) + 16;")
RESPELLED = BEFORE.replace("std::max({", "widest({")
OTHER_ARGUMENT = BEFORE.replace("std::max({sizeof(float), sizeof(int)})", "widest({sizeof(float), sizeof(double)})")
INT_SIZES = BEFORE.replace("std::max({sizeof(float), sizeof(int)})", "std::max({kLanes, kLanes + 4})")
NOT_A_SIZE = INT_SIZES.replace("std::max({", "widest({")

PORT = {"kernels/scale.cu": (
    f"// portq: ports vllm:{SOURCE}::norm::ScaleKernel\n"
    "__global__ void scale_kernel(const float* x, float* y, int dims)\n{\n"
    "    int row = blockIdx.x;\n"
    "    for (int t = threadIdx.x; t < dims; t += 32) {\n"
    "        y[row * dims + t] = x[row * dims + t] * 2.0f;\n    }\n}\n\n"
    "void run_scale(const float* x, float* y, int dims, int rows)\n{\n"
    "    scale_kernel<<<rows, 256>>>(x, y, dims);\n}\n")}


def _scan(tmp_path, after, helper, before=BEFORE):
    header = BEFORE_HEADER.replace("namespace norm {\n", helper + "\nnamespace norm {\n", 1)
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("change", files={HEADER: header, SOURCE: after})], PORT, matrix=MATRIX_WITH_NORM)
    entry = verdicts[1]
    return entry, {s.symbol: s for s in entry.symbols if s.path == SOURCE}


def test_a_call_respelled_through_a_forwarding_helper_is_cosmetic(tmp_path):
    entry, symbols = _scan(tmp_path, RESPELLED, HELPER)
    traits = symbols["norm::ScaleTraits"]
    assert traits.verdict == NOT_APPLICABLE and traits.justification == "cosmetic", traits.reason
    assert "forwarding-helper-call" in traits.rules, traits.rules
    assert "widest" in traits.reason, traits.reason


def test_the_helper_of_the_default_build_is_the_one_read(tmp_path):
    entry, symbols = _scan(tmp_path, RESPELLED, OTHER_BUILD_HELPER)
    traits = symbols["norm::ScaleTraits"]
    assert "forwarding-helper-call" in traits.rules, traits.reason


def test_a_helper_that_computes_more_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, RESPELLED, MORE_HELPER)
    traits = symbols["norm::ScaleTraits"]
    assert "forwarding-helper-call" not in traits.rules and traits.verdict in FLAGGED, traits.reason


def test_a_helper_only_the_other_build_compiles_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, RESPELLED, "#ifdef USE_GPU_B\n" + HELPER + "#endif\n")
    traits = symbols["norm::ScaleTraits"]
    assert "forwarding-helper-call" not in traits.rules and traits.verdict in FLAGGED, traits.reason


def test_another_argument_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, OTHER_ARGUMENT, HELPER)
    traits = symbols["norm::ScaleTraits"]
    assert "forwarding-helper-call" not in traits.rules and traits.verdict in FLAGGED, traits.reason


def test_an_argument_not_of_the_parameters_type_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, NOT_A_SIZE, HELPER, before=INT_SIZES)
    traits = symbols["norm::ScaleTraits"]
    assert "forwarding-helper-call" not in traits.rules and traits.verdict in FLAGGED, traits.reason


def test_a_helper_defined_again_in_a_namespace_is_still_flagged(tmp_path):
    again = HELPER + "\nnamespace norm {\nconstexpr size_t widest(std::initializer_list<size_t> sizes)\n{\n" \
        "    return 64;\n}\n}  // namespace norm\n"
    entry, symbols = _scan(tmp_path, RESPELLED, again)
    traits = symbols["norm::ScaleTraits"]
    assert "forwarding-helper-call" not in traits.rules and traits.verdict in FLAGGED, traits.reason
