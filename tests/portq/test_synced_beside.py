"""``synced-beside``: a definition whose parameter change the port already has is IN_SYNC only when every other
changed line of its body is that change's. A line that reads the new parameter through a local derived from it
is the parameter's; a line inside a branch on the new parameter is too. A line that reads the parameter AND
changes unrelated arithmetic (another constant, another operator) is not the parameter change: it stays flagged
unless the port already has the new line (and not the old one).

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE
from tests.portq.test_every_changed_item_decided import HEADER_AFTER, KERNEL, PY_HOST, PY_KERNEL, PY_SIGNED, SIGNED, _port

# C++: the new parameter read through a local the body derives from it
DERIVED = SIGNED.replace("    out[blockIdx.x] = acc * eps * scale;\n",
                         "    const float s2 = scale * 2.0f;\n    out[blockIdx.x] = acc * eps * s2;\n")
# C++: the line that reads the new parameter also divides where it multiplied
REWEIGHED = SIGNED.replace("acc * eps * scale;", "acc / eps * scale;")
# C++: a branch on the new parameter
BRANCHED = SIGNED.replace("    out[blockIdx.x] = acc * eps * scale;\n",
                          "    if (scale > 0.0f) {\n        acc = acc * 2.0f;\n    }\n    out[blockIdx.x] = acc * eps;\n")
# ... and the same statement outside any branch on it
UNBRANCHED = SIGNED.replace("    out[blockIdx.x] = acc * eps * scale;\n",
                            "    acc = acc * 2.0f;\n    out[blockIdx.x] = acc * eps * scale;\n")


def _kernel(tmp_path, after, port):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: KERNEL}),
                   CommitSpec("change", files={HEADER: HEADER_AFTER, SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("RowNormKernel"))


def _derived_port() -> dict[str, str]:
    return {path: text.replace("    y[blockIdx.x] = acc * eps * scale;\n",
                               "    const float s2 = scale * 2.0f;\n    y[blockIdx.x] = acc * eps * s2;\n")
            for path, text in _port().items()}


def test_a_local_derived_from_the_parameter_is_the_parameter_change(tmp_path):
    kernel = _kernel(tmp_path, DERIVED, _derived_port())
    assert kernel.verdict == IN_SYNC, (kernel.verdict, kernel.rules, kernel.reason)


def test_a_line_reading_the_parameter_that_also_changes_an_operator_is_flagged(tmp_path):
    kernel = _kernel(tmp_path, REWEIGHED, _port())
    assert kernel.verdict in FLAGGED, (kernel.verdict, kernel.rules, kernel.reason)
    assert "synced-beside" in kernel.rules, kernel.rules


def test_a_statement_in_a_branch_on_the_parameter_is_the_parameter_change(tmp_path):
    kernel = _kernel(tmp_path, BRANCHED, _port())
    assert kernel.verdict == IN_SYNC, (kernel.verdict, kernel.rules, kernel.reason)


def test_the_same_statement_outside_a_branch_on_the_parameter_is_flagged(tmp_path):
    kernel = _kernel(tmp_path, UNBRANCHED, _port())
    assert kernel.verdict in FLAGGED, (kernel.verdict, kernel.rules, kernel.reason)
    assert "synced-beside" in kernel.rules, kernel.rules


# Python: the line that multiplies by the new parameter also changes the constant beside it
PY_RECONSTANTED = PY_SIGNED.replace("v * 2 * scale,", "v * 3 * scale,")


def _py_kernel(tmp_path, after, ported):
    port = ported.replace("@triton.jit\n", f"# portq: ports vllm:{PY_HOST}::_scale_kernel\n@triton.jit\n") \
        .replace("def scale(x, out, s):", f"# portq: ports vllm:{PY_HOST}::scale\ndef scale(x, out, s):")
    caller = "from portq_kernels.mla_prefix.rows import scale\n\n\ndef prepare(x, out):\n    scale(x, out, 0.5)\n"
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={PY_HOST: PY_KERNEL}), CommitSpec("change", files={PY_HOST: after})],
        {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller})
    return next(s for s in verdicts[1].symbols if s.symbol == "_scale_kernel")


def test_a_line_reading_the_parameter_that_also_changes_a_constant_is_flagged(tmp_path):
    kernel = _py_kernel(tmp_path, PY_RECONSTANTED, PY_SIGNED)
    assert kernel.verdict in FLAGGED, (kernel.verdict, kernel.rules, kernel.reason)
    assert "synced-beside" in kernel.rules, kernel.rules


def test_the_same_line_the_port_already_has_is_in_sync(tmp_path):
    kernel = _py_kernel(tmp_path, PY_RECONSTANTED, PY_RECONSTANTED)
    assert kernel.verdict == IN_SYNC, (kernel.verdict, kernel.rules, kernel.reason)
