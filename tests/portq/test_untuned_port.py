"""A tuning space the port does not have (issue 24, the third held-out split; ``untuned-port``).

A Triton kernel whose only change is the ``configs`` argument of its
``@triton.autotune`` decorator (the list of launch configurations the
autotuner times, now built by a helper) changed the search space of a tuner,
not what any configuration computes. A port whose kernel is not autotuned
picks its launch parameters itself: the configs are an interface it lacks,
NOT_APPLICABLE/not-carried, and so is a change to the tuner's ``key`` (the
arguments whose change makes it time its configs again). A port that
autotunes too, a change to what the tuner resets between runs, or a body
change, is compared as before."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({}, num_warps=1),
        triton.Config({}, num_warps=2),
        triton.Config({}, num_warps=4),
    ],
    key=["N"],
)
@triton.jit
def _scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols, mask=cols < N)
    tl.store(Y + row * N + cols, x * 2, mask=cols < N)
'''

HELPER = '''

def autotune_configs():
    warp_size = 32
    configs, warps = [], 1
    while warps * warp_size <= 128:
        configs.append(triton.Config({}, num_warps=warps))
        warps *= 2
    return configs
'''

AFTER = BEFORE.replace('''    configs=[
        triton.Config({}, num_warps=1),
        triton.Config({}, num_warps=2),
        triton.Config({}, num_warps=4),
    ],''', "    configs=autotune_configs(),").replace("import triton.language as tl\n",
                                                   "import triton.language as tl\n" + HELPER, 1)

PORT = '''import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::_scale_kernel
@triton.jit
def _double_rows(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols, mask=cols < N)
    tl.store(Y + row * N + cols, x * 2, mask=cols < N)


def double(x):
    y = torch.empty_like(x)
    _double_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=4)
    return y
'''

TUNED_PORT = PORT.replace("@triton.jit\ndef _double_rows",
                          "@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=[\"N\"])\n"
                          "@triton.jit\ndef _double_rows").replace(", num_warps=4)", ")")


def _kernel(tmp_path, before, after, port):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import double\n\n\n"
                                            "def apply(x):\n    return double(x)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "_scale_kernel")


def test_new_autotune_configs_for_a_port_that_does_not_autotune_are_not_carried(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, AFTER, PORT)
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "not-carried"), kernel.reason
    assert "untuned-port" in kernel.rules


def test_a_port_that_autotunes_too_is_compared(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, AFTER, TUNED_PORT)
    assert "untuned-port" not in kernel.rules, kernel.reason
    assert kernel.verdict != NOT_APPLICABLE


def test_a_changed_tuning_key_for_a_port_that_does_not_autotune_is_not_carried(tmp_path):
    # The key names the arguments whose change makes the tuner time its configs again: which config it
    # picks, never what one computes; a port choosing its own launch parameters has no tuner to key.
    for after in (AFTER.replace('key=["N"]', 'key=["N", "BLOCK"]'), BEFORE.replace('key=["N"]', 'key=[]')):
        kernel = _kernel(tmp_path / str(len(after)), BEFORE, after, PORT)
        assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "not-carried"), kernel.reason
        assert "untuned-port" in kernel.rules


def test_a_changed_reset_between_tuning_runs_is_compared(tmp_path):
    # What the tuner resets between runs is written into the outputs the kernel accumulates into.
    after = AFTER.replace('key=["N"]', 'key=["N"], reset_to_zero=["Y"]')
    kernel = _kernel(tmp_path, BEFORE.replace('key=["N"]', 'key=["N"], reset_to_zero=[]'), after, PORT)
    assert "untuned-port" not in kernel.rules, kernel.reason
    assert kernel.verdict != NOT_APPLICABLE


def test_configs_changed_with_the_body_are_compared(tmp_path):
    after = AFTER.replace("x * 2", "x * 3")
    kernel = _kernel(tmp_path, BEFORE, after, PORT)
    assert "untuned-port" not in kernel.rules, kernel.reason
    assert kernel.verdict != NOT_APPLICABLE
