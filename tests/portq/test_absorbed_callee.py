"""A forwarding definition that absorbs the one it called (issue 24, the twenty-third held-out split;
``absorbed-callee``).

A host function whose whole body passed each of its parameters, by its own
name, to another function of the same module takes that function's body and
its decorators in a commit (the outer wrapper and the inner one merged, the
inner removed). Calling the merged function runs what calling the old pair
ran: the same parameters reach the same body under the same decorators in
the same order. NOT_APPLICABLE/cosmetic, and not-carried where the only
other change is the arguments of a tuner the port does not carry. An
argument computed rather than passed on, a dropped or reordered decorator,
a body that differs, or a returned value the wrapper used to drop, stays
flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch

from .registry import register_op
from .tuning import TuneConfig, tune
from .kernels import scale_kernel


@register_op("lib::scale_rows", mutates_args={"y"})
def _scale_rows(x: torch.Tensor, y: torch.Tensor, BLOCK: int) -> None:
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)


@tune(configs=[TuneConfig({"BLOCK": b}) for b in (64, 128, 256)], retime_on={"x.dtype"})
def scale_rows(x: torch.Tensor, y: torch.Tensor, BLOCK: int) -> None:
    _scale_rows(x=x, y=y, BLOCK=BLOCK)
'''

AFTER = '''import torch

from .registry import register_op
from .tuning import TuneConfig, tune
from .kernels import scale_kernel


@tune(configs=[TuneConfig({"BLOCK": b}) for b in (64, 128, 256)], retime_on={"x.dtype"})
@register_op("lib::scale_rows", mutates_args={"y"})
def scale_rows(x: torch.Tensor, y: torch.Tensor, BLOCK: int) -> None:
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)
'''

PORT = '''import torch


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows
def scale(x, y, block):
    n = x.numel()
    scale_kernel[(n // block + 1,)](x, y, n, BLOCK=block)
'''


def _host(tmp_path, before, after, port=PORT):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x, y):\n    return scale(x, y, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "scale_rows")


def test_a_forwarding_wrapper_that_absorbs_its_callee_is_cosmetic(tmp_path):
    host = _host(tmp_path, BEFORE, AFTER)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "cosmetic"), host.reason
    assert "absorbed-callee" in host.rules
    assert "_scale_rows" in host.reason


def test_absorbed_with_new_arguments_of_a_tuner_the_port_lacks_is_not_carried(tmp_path):
    after = AFTER.replace('retime_on={"x.dtype"})', 'retime_on={"x.dtype"}, when={"wide": lambda **kw: kw["BLOCK"] > 128})')
    host = _host(tmp_path, BEFORE, after)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert {"absorbed-callee", "uncarried-tuner"} <= set(host.rules)


def test_a_computed_argument_is_compared(tmp_path):
    # The wrapper passed BLOCK * 2, not BLOCK: the absorbed body now reads a different value.
    host = _host(tmp_path, BEFORE.replace("_scale_rows(x=x, y=y, BLOCK=BLOCK)", "_scale_rows(x=x, y=y, BLOCK=BLOCK * 2)"),
                 AFTER)
    assert "absorbed-callee" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_dropped_decorator_is_compared(tmp_path):
    host = _host(tmp_path, BEFORE, AFTER.replace('@register_op("lib::scale_rows", mutates_args={"y"})\n', ""))
    assert "absorbed-callee" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_decorators_in_another_order_are_compared(tmp_path):
    tuned = '@tune(configs=[TuneConfig({"BLOCK": b}) for b in (64, 128, 256)], retime_on={"x.dtype"})\n'
    registered = '@register_op("lib::scale_rows", mutates_args={"y"})\n'
    host = _host(tmp_path, BEFORE, AFTER.replace(tuned + registered, registered + tuned))
    assert "absorbed-callee" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_body_that_differs_from_the_callee_is_compared(tmp_path):
    host = _host(tmp_path, BEFORE, AFTER.replace("n // BLOCK + 1", "(n + BLOCK - 1) // BLOCK"))
    assert "absorbed-callee" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_value_the_wrapper_dropped_is_compared(tmp_path):
    # The callee returns n, the wrapper returned None; the merged function now returns n.
    before = BEFORE.replace("BLOCK=BLOCK)\n\n\n@tune", "BLOCK=BLOCK)\n    return n\n\n\n@tune")
    after = AFTER + "    return n\n"
    host = _host(tmp_path, before, after)
    assert "absorbed-callee" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE
