"""A kernel's stored value retyped, which a port that computes it its own way already has (issue 24;
``port-has-retyped-value``).

Upstream's dequantising kernel goes back from fp16 to fp32: the scale it loads is cast to ``tl.float32``
instead of ``tl.float16`` and the difference of weight and zero point too. Read as what it computes (single-use
locals written into the one value the kernel stores), the change replaces two dtypes and nothing else. A port
that addresses its loads otherwise (its own locals, no ``other`` argument) never reads as upstream's statement
whole, but its one store reaches each retyped place through the same operations, the operands beside them
loaded through the same pointers (pointer parameters paired in order), and holds ``tl.float32`` there: it
already has the change (IN_SYNC). A port holding the old dtype at one place, casting an operand loaded
through another pointer, or an upstream change that touches anything but constants stays flagged.
"""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE

SCALE_MATRIX = MATRIX.replace('"ops/utils/*.py"]', '"ops/utils/*.py", "ops/scale.py"]')

UPSTREAM = '''\
import triton
import triton.language as tl


@triton.jit
def dequant_kernel(w_ptr, s_ptr, z_ptr, out_ptr, n, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    grp = offs // GROUP
    scales = tl.load(s_ptr + grp, None).to(tl.{scale_type})
    w = tl.load(w_ptr + offs, mask=live)
    z = tl.load(z_ptr + grp, None)
{compute}
    tl.store(out_ptr + offs, w, mask=live)
'''

OLD = "    w = w - z\n    w = w.to(tl.float16)\n    w = scales * w"
NEW = "    w = (w - z).to(tl.float32) * scales"

PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/scale.py::dequant_kernel
@triton.jit
def _dequant(src, scale, zero, dst, total, group: tl.constexpr, TILE: tl.constexpr):
    flat = tl.program_id(0) * TILE + tl.arange(0, TILE)
    live = flat < total
    q = tl.load(src + flat, mask=live)
    z = tl.load(zero + flat // group)
    s = tl.load(scale + flat // group).to(tl.{scale_type})
    tl.store(dst + flat, s * (q - z).to(tl.{diff_type}), mask=live)
'''


def _entry(tmp_path, port, old=OLD, new=NEW, new_scale="float32"):
    tree = {**TREE, "kernels/scale.py": port}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scale.py": UPSTREAM.format(compute=old, scale_type="float16")}),
        CommitSpec("change", files={"ops/scale.py": UPSTREAM.format(compute=new, scale_type=new_scale)}),
    ], tree, matrix=SCALE_MATRIX)
    return verdicts[1]


def test_a_port_storing_the_retyped_value_its_own_way_is_in_sync(tmp_path):
    entry = _entry(tmp_path, PORT.format(scale_type="float32", diff_type="float32"))
    assert entry.verdict == IN_SYNC, entry.reason
    assert "port-has-retyped-value" in entry.rules


def test_a_port_with_the_old_type_at_one_place_needs_review(tmp_path):
    entry = _entry(tmp_path, PORT.format(scale_type="float32", diff_type="float16"))
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason
    assert "port-has-retyped-value" not in entry.rules


def test_a_port_casting_an_operand_loaded_through_another_pointer_needs_review(tmp_path):
    # The port's cast scale is loaded through its zero-point pointer and its zero point through the scales.
    port = PORT.format(scale_type="float32", diff_type="float32") \
        .replace("z = tl.load(zero + flat // group)", "z = tl.load(scale + flat // group)") \
        .replace("s = tl.load(scale + flat // group)", "s = tl.load(zero + flat // group)")
    entry = _entry(tmp_path, port)
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason
    assert "port-has-retyped-value" not in entry.rules


def test_a_change_beyond_constants_needs_review(tmp_path):
    # Upstream also stops subtracting the zero point: more than a retyped value.
    entry = _entry(tmp_path, PORT.format(scale_type="float32", diff_type="float32"),
                   new="    w = w.to(tl.float32) * scales")
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason
    assert "port-has-retyped-value" not in entry.rules


def test_a_port_with_another_operation_on_the_way_needs_review(tmp_path):
    # The port adds the zero point where upstream subtracts it.
    port = PORT.format(scale_type="float32", diff_type="float32").replace("(q - z)", "(q + z)")
    entry = _entry(tmp_path, port)
    assert entry.verdict in FLAGGED and entry.verdict != IN_SYNC, entry.reason
    assert "port-has-retyped-value" not in entry.rules
