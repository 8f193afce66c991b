"""A pinned copy of a definition upstream deletes (docs/tricky-cases.md, "a
removed definition a pinned copy still holds"): ``removed-pinned-definition``.

A copy pinned to an upstream commit holds upstream's code as it was there: a
definition upstream deletes afterwards is code the copy is behind on. When
no non-test code in the tree reaches the copy, that is INERT (as REAL_GAP,
but nothing the engine runs uses it), never NOT_APPLICABLE, even when no
upstream code named it either. A template nothing names and nothing calls is
never instantiated, so no code in any build: deleting it stays
``uncalled-definition`` (cosmetic). A pinned copy the engine still reaches
needs a reader (``removed-definition``), and a port without a pin is decided
as before.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import INERT, NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

UNPACK = "csrc/quant/unpack.cu"

LOW = '''__device__ float unpack_low(unsigned char v, float scale) {
    return (v & 0x0F) * scale;
}

'''

SHIFTED = '''template <int kShift>
__device__ float unpack_shifted(unsigned char v, float scale) {
    return ((v >> kShift) & 0x0F) * scale;
}

'''

BEFORE = '''#include <cuda_runtime.h>

''' + LOW + SHIFTED + '''__device__ float unpack_high(unsigned char v, float scale) {
    return (v >> 4) * scale;
}

__global__ void dequant_kernel(const unsigned char* q, float* out, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = unpack_high(q[i], scale);
        // out[i] = unpack_low(q[i], scale) + unpack_shifted<2>(q[i], scale);
    }
}
'''


def _copy(pin: str | None) -> str:
    """The vendored copy of the file, anchored (and pinned at ``pin``) definition by definition."""
    at = f" @{pin}" if pin else ""
    text = BEFORE
    for name in ("unpack_low", "unpack_high", "dequant_kernel"):
        head = f"__device__ float {name}(" if name != "dequant_kernel" else f"__global__ void {name}("
        text = text.replace(head, f"// portq: ports vllm:{UNPACK}::{name}{at}\n" + head)
    return text.replace("template <int kShift>\n",
                        f"// portq: ports vllm:{UNPACK}::unpack_shifted{at}\ntemplate <int kShift>\n")


ENGINE = ('#include "unpack.cu"\n\nvoid dequant(const unsigned char* q, float* out, float s, int n) '
          '{ dequant_kernel<<<(n + 255) / 256, 256>>>(q, out, s, n); }\n')


def _removed(tmp_path, removed: str, extra=None, pinned=True):
    after = BEFORE.replace(removed, "").replace(
        "        // out[i] = unpack_low(q[i], scale) + unpack_shifted<2>(q[i], scale);\n", "")
    commits = [CommitSpec("base", files={UNPACK: BEFORE}), CommitSpec("cleanup", files={UNPACK: after})]
    _, shas = classify_history(tmp_path / "first", commits, {"kernels/quant/unpack.cu": _copy(None)})
    tree = {"kernels/quant/unpack.cu": _copy(shas[0][:10] if pinned else None), "kernels/quant/engine.cu": ENGINE,
            **(extra or {})}
    verdicts, _ = classify_history(tmp_path / "second", commits, tree)
    return verdicts[1]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_removed_function_a_pinned_copy_holds_and_nothing_reaches_is_inert(tmp_path):
    verdict = _removed(tmp_path, LOW)
    low = _symbol(verdict, "unpack_low")
    assert low.verdict == INERT, low.reason
    assert "removed-pinned-definition" in low.rules
    assert verdict.verdict == INERT, verdict.reason


def test_a_removed_function_a_pinned_copy_holds_and_only_tests_reach_is_inert(tmp_path):
    test = {"tests/quant/test_unpack.cu": '#include "../../kernels/quant/unpack.cu"\n\n'
                                          'float test_low() { return unpack_low(3, 1.0f); }\n'}
    low = _symbol(_removed(tmp_path, LOW, test), "unpack_low")
    assert low.verdict == INERT, low.reason
    assert "removed-pinned-definition" in low.rules


def test_a_removed_function_the_engine_reaches_through_a_pinned_copy_needs_review(tmp_path):
    engine = {"kernels/quant/rows.cu": '#include "unpack.cu"\n\nfloat rows(unsigned char v) { return unpack_low(v, 2.0f); }\n'}
    low = _symbol(_removed(tmp_path, LOW, engine), "unpack_low")
    assert low.verdict == NEEDS_REVIEW, low.reason
    assert "removed-pinned-definition" not in low.rules and "removed-definition" in low.rules


def test_a_removed_template_nothing_names_is_no_code_even_in_a_pinned_copy(tmp_path):
    shifted = _symbol(_removed(tmp_path, SHIFTED), "unpack_shifted")
    assert (shifted.verdict, shifted.justification) == (NOT_APPLICABLE, "cosmetic"), shifted.reason
    assert "uncalled-definition" in shifted.rules


def test_a_removed_function_an_unpinned_port_holds_and_no_code_named_is_still_cosmetic(tmp_path):
    low = _symbol(_removed(tmp_path, LOW, pinned=False), "unpack_low")
    assert (low.verdict, low.justification) == (NOT_APPLICABLE, "cosmetic"), low.reason
    assert "uncalled-definition" in low.rules


MASKED = BEFORE.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n\n#define LOW_MASK 0x0F\n") \
    .replace("return (v & 0x0F) * scale;", "return (v & LOW_MASK) * scale;")


def _removed_with_lines(tmp_path, before):
    after = before.replace(LOW.replace("0x0F", "LOW_MASK"), "").replace("#define LOW_MASK 0x0F\n", "").replace(
        "        // out[i] = unpack_low(q[i], scale) + unpack_shifted<2>(q[i], scale);\n", "")
    commits = [CommitSpec("base", files={UNPACK: before}), CommitSpec("cleanup", files={UNPACK: after})]
    _, shas = classify_history(tmp_path / "first", commits, {"kernels/quant/unpack.cu": _copy(None)})
    copy = _copy(shas[0][:10])
    copy = copy.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n\n#define LOW_MASK 0x0F\n") \
        .replace("return (v & 0x0F) * scale;", "return (v & LOW_MASK) * scale;")
    if "(v >> 4) & LOW_MASK" in before:
        copy = copy.replace("return (v >> 4) * scale;", "return ((v >> 4) & LOW_MASK) * scale;")
    verdicts, _ = classify_history(tmp_path / "second", commits,
                                   {"kernels/quant/unpack.cu": copy, "kernels/quant/engine.cu": ENGINE})
    return verdicts[1]


def test_lines_outside_definitions_only_the_deleted_pinned_copy_used_go_with_it(tmp_path):
    verdict = _removed_with_lines(tmp_path, MASKED)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == INERT, toplevel.reason
    assert "removed-pinned-definition" in toplevel.rules
    assert verdict.verdict == INERT, verdict.reason


def test_lines_outside_definitions_a_kept_definition_also_uses_still_need_review(tmp_path):
    shared = MASKED.replace("return (v >> 4) * scale;", "return ((v >> 4) & LOW_MASK) * scale;")
    verdict = _removed_with_lines(tmp_path, shared)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == NEEDS_REVIEW, toplevel.reason
    assert "removed-pinned-definition" not in toplevel.rules


def test_lines_only_a_deleted_template_upstream_named_used_go_with_it(tmp_path):
    # a template upstream code instantiated is code: its copy is INERT, and so is the macro only it read
    before = MASKED.replace("__device__ float unpack_low(unsigned char v, float scale) {",
                            "template <int kUnused>\n__device__ float unpack_low(unsigned char v, float scale) {") \
        .replace("        out[i] = unpack_high(q[i], scale);\n",
                 "        out[i] = unpack_high(q[i], scale) + unpack_low<0>(q[i], scale);\n")
    after = before.replace("template <int kUnused>\n" + LOW.replace("0x0F", "LOW_MASK"), "") \
        .replace("#define LOW_MASK 0x0F\n", "").replace(" + unpack_low<0>(q[i], scale)", "").replace(
        "        // out[i] = unpack_low(q[i], scale) + unpack_shifted<2>(q[i], scale);\n", "")
    commits = [CommitSpec("base", files={UNPACK: before}), CommitSpec("cleanup", files={UNPACK: after})]
    _, shas = classify_history(tmp_path / "first", commits, {"kernels/quant/unpack.cu": _copy(None)})
    copy = _copy(shas[0][:10]).replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n\n#define LOW_MASK 0x0F\n") \
        .replace("return (v & 0x0F) * scale;", "return (v & LOW_MASK) * scale;") \
        .replace("__device__ float unpack_low(", "template <int kUnused>\n__device__ float unpack_low(")
    verdicts, _ = classify_history(tmp_path / "second", commits,
                                   {"kernels/quant/unpack.cu": copy, "kernels/quant/engine.cu": ENGINE})
    toplevel = _symbol(verdicts[1], "<toplevel>")
    assert toplevel.verdict == INERT, toplevel.reason
    assert "removed-pinned-definition" in toplevel.rules
