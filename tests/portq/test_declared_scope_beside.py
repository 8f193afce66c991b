"""``declared-scope`` clears a change only when every changed line is about the parameters the tree declares
not carried. A commit that adds a declared-off bias input and, on a line that also reads it, changes the
arithmetic of the path the port carries (the stored value's factor) is flagged; so is one that changes that
factor on a line of its own. The bias alone, behind its flag, stays not-carried.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_every_changed_item_decided import PY_HOST, PY_KERNEL

BIASED = PY_KERNEL.replace("out_ptr, n, BLOCK: tl.constexpr)", "out_ptr, b_ptr, n, BLOCK: tl.constexpr, "
                           "HAS_B: tl.constexpr)") \
    .replace("    tl.store(", "    if HAS_B:\n        v += tl.load(b_ptr + offs, mask=offs < n)\n    tl.store(") \
    .replace("def scale(x, out):", "def scale(x, out, b=None):") \
    .replace("(x, out, n, BLOCK=256)", "(x, out, b, n, BLOCK=256, HAS_B=b is not None)")
# the bias folded into the load's line, whose factor on the carried path changes with it
FOLDED = PY_KERNEL.replace("out_ptr, n, BLOCK: tl.constexpr)", "out_ptr, b_ptr, n, BLOCK: tl.constexpr, "
                           "HAS_B: tl.constexpr)") \
    .replace("    v = tl.load(x_ptr + offs, mask=offs < n)\n",
             "    v = tl.load(x_ptr + offs, mask=offs < n) * 3 + tl.load(b_ptr + offs, mask=offs < n) * HAS_B\n") \
    .replace("def scale(x, out):", "def scale(x, out, b=None):") \
    .replace("(x, out, n, BLOCK=256)", "(x, out, b, n, BLOCK=256, HAS_B=b is not None)")


def _kernel(tmp_path, after):
    port = PY_KERNEL.replace("@triton.jit\n", f"# portq: ports vllm:{PY_HOST}::_scale_kernel\n"
                             f"# portq: not-carried vllm:{PY_HOST}::_scale_kernel[HAS_B] -- no bias\n"
                             f"# portq: not-carried vllm:{PY_HOST}::_scale_kernel[b_ptr] -- no bias\n@triton.jit\n") \
        .replace("def scale(x, out):", f"# portq: ports vllm:{PY_HOST}::scale\n"
                 f"# portq: not-carried vllm:{PY_HOST}::scale[b] -- no bias\ndef scale(x, out):")
    caller = "from portq_kernels.mla_prefix.rows import scale\n\n\ndef prepare(x, out):\n    scale(x, out)\n"
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={PY_HOST: PY_KERNEL}), CommitSpec("change", files={PY_HOST: after})],
        {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller})
    return next(s for s in verdicts[1].symbols if s.symbol == "_scale_kernel")


def test_a_declared_off_bias_alone_is_not_carried(tmp_path):
    kernel = _kernel(tmp_path, BIASED)
    assert kernel.verdict == NOT_APPLICABLE, (kernel.rules, kernel.reason)


def test_a_carried_factor_changed_on_its_own_line_beside_the_bias_is_flagged(tmp_path):
    kernel = _kernel(tmp_path, BIASED.replace("v * 2,", "v * 3,"))
    assert kernel.verdict in FLAGGED, (kernel.rules, kernel.reason)


def test_a_carried_factor_changed_on_the_line_that_reads_the_bias_is_flagged(tmp_path):
    kernel = _kernel(tmp_path, FOLDED)
    assert kernel.verdict in FLAGGED, (kernel.rules, kernel.reason)
