"""A tuner the port does not carry (issue 24, the twenty-third held-out split; ``uncarried-tuner``).

A host function wrapped by a library's own autotuning decorator (a decorator
called with a ``configs`` keyword: the configurations it times) whose only
change is the tuner's arguments (a configuration to use when tuning is off,
what makes it time again) changed how the tuner picks launch parameters. A
port whose definition carries no decorator of that name calls the function
with launch parameters of its own: the tuner is an interface it lacks,
NOT_APPLICABLE/not-carried. A port that carries the tuner, a tuner argument
naming the function's buffers (what a tuner resets or restores between timed
runs), a change to the function itself, or a decorator that is no tuner, is
compared as before."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch

from .tuning import TuneConfig, tune
from .kernels import scale_kernel


@tune(
    configs=[TuneConfig({"BLOCK": b}) for b in (64, 128, 256)],
    retime_on={"x.dtype"},
)
def scale_rows(x: torch.Tensor, y: torch.Tensor, BLOCK: int) -> None:
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)
'''

AFTER = BEFORE.replace('    retime_on={"x.dtype"},\n',
                       '    fallback=TuneConfig({"BLOCK": 128}),\n    retime_on={"x.dtype", "x.shape"},\n')

PORT = '''import torch


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows
def scale(x, y, block):
    n = x.numel()
    scale_kernel[(n // block + 1,)](x, y, n, BLOCK=block)
'''

CARRIED_PORT = PORT.replace("def scale(", '@tune(configs=[TuneConfig({"BLOCK": 128})])\ndef scale(')


def _host(tmp_path, before, after, port):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x, y):\n    return scale(x, y, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "scale_rows")


def test_new_tuner_arguments_for_a_port_without_the_tuner_are_not_carried(tmp_path):
    host = _host(tmp_path, BEFORE, AFTER, PORT)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "uncarried-tuner" in host.rules
    assert "tune" in host.reason


def test_a_port_that_carries_the_tuner_is_compared(tmp_path):
    host = _host(tmp_path, BEFORE, AFTER, CARRIED_PORT)
    assert "uncarried-tuner" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_tuner_argument_naming_the_buffers_is_compared(tmp_path):
    # A list of the function's parameters by name is what a tuner resets or restores between timed runs.
    after = BEFORE.replace('    retime_on={"x.dtype"},\n', '    retime_on={"x.dtype"},\n    reset=["y"],\n')
    host = _host(tmp_path, BEFORE, after, PORT)
    assert "uncarried-tuner" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_tuner_arguments_changed_with_the_body_are_compared(tmp_path):
    host = _host(tmp_path, BEFORE, AFTER.replace("n // BLOCK + 1", "(n + BLOCK - 1) // BLOCK"), PORT)
    assert "uncarried-tuner" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_decorator_that_is_no_tuner_is_compared(tmp_path):
    # Without a ``configs`` keyword the decorator is not known to only choose among launch parameters.
    before = BEFORE.replace('    configs=[TuneConfig({"BLOCK": b}) for b in (64, 128, 256)],\n', "")
    after = AFTER.replace('    configs=[TuneConfig({"BLOCK": b}) for b in (64, 128, 256)],\n', "")
    host = _host(tmp_path, before, after, PORT)
    assert "uncarried-tuner" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE
