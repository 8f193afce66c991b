"""A check removed that the port never had (issue 24, the twenty-third held-out split; ``port-lacks-check``).

A kernel whose only change drops an assertion (``tl.device_assert(BLOCK >= N,
...)``, an ``assert`` statement) now accepts what it used to stop. A port
whose definition has no assertion of that kind never stopped it: the touched
line is already in the port's form, IN_SYNC. A port that asserts too, a
removed statement that is no assertion, or an assertion removed with other
changes, is compared as before."""
from __future__ import annotations

from portq.core.model import IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import triton
import triton.language as tl


@triton.jit
def _scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    tl.device_assert(BLOCK >= N, "one block must cover N")

    cols = tl.arange(0, BLOCK)
    x = tl.load(X + tl.program_id(0) * N + cols, mask=cols < N)
    tl.store(Y + tl.program_id(0) * N + cols, x * 2, mask=cols < N)
'''

AFTER = BEFORE.replace('    tl.device_assert(BLOCK >= N, "one block must cover N")\n\n', "")

PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::_scale_kernel
@triton.jit
def _double_rows(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * N + cols, mask=cols < N)
        tl.store(Y + row * N + cols, x * 2, mask=cols < N)


def double(x):
    y = torch.empty_like(x)
    _double_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=128)
    return y
'''

ASSERTING_PORT = PORT.replace("    row = tl.program_id(0)\n",
                              "    tl.device_assert(BLOCK >= N, \"one block\")\n    row = tl.program_id(0)\n")


def _kernel(tmp_path, before, after, port=PORT):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import double\n\n\n"
                                            "def apply(x):\n    return double(x)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "_scale_kernel")


def test_a_removed_assertion_the_port_never_had_is_in_sync(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, AFTER)
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "port-lacks-check" in kernel.rules
    assert "device_assert" in kernel.reason


def test_a_removed_assert_statement_the_port_never_had_is_in_sync(tmp_path):
    before = BEFORE.replace('    tl.device_assert(BLOCK >= N, "one block must cover N")\n',
                            '    assert BLOCK >= 16, "a block of at least 16"\n')
    kernel = _kernel(tmp_path, before, AFTER)
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "port-lacks-check" in kernel.rules


def test_a_port_that_asserts_too_is_compared(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, AFTER, ASSERTING_PORT)
    assert "port-lacks-check" not in kernel.rules, kernel.reason


def test_a_removed_statement_that_is_no_assertion_is_compared(tmp_path):
    before = BEFORE.replace('    tl.device_assert(BLOCK >= N, "one block must cover N")\n',
                            '    tl.store(Y, 0.0)\n')
    kernel = _kernel(tmp_path, before, AFTER)
    assert "port-lacks-check" not in kernel.rules, kernel.reason
    assert kernel.verdict != IN_SYNC


def test_an_assertion_removed_with_another_change_is_compared(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, AFTER.replace("x * 2", "x * 3"))
    assert "port-lacks-check" not in kernel.rules, kernel.reason
    assert kernel.verdict != IN_SYNC


def test_a_port_method_that_asserts_is_compared(tmp_path):
    # The port's definition is read as it stands in its class, indented.
    method = '''import torch
import triton
import triton.language as tl


class Doubler:
    # portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::_scale_kernel
    @staticmethod
    @triton.jit
    def rows(X, Y, N, BLOCK: tl.constexpr):
        tl.device_assert(BLOCK >= N, "one block")
        cols = tl.arange(0, BLOCK)
        x = tl.load(X + tl.program_id(0) * N + cols, mask=cols < N)
        tl.store(Y + tl.program_id(0) * N + cols, x * 2, mask=cols < N)


def double(x):
    y = torch.empty_like(x)
    Doubler.rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=128)
    return y
'''
    kernel = _kernel(tmp_path, BEFORE, AFTER, method)
    assert "port-lacks-check" not in kernel.rules, kernel.reason


def test_a_port_that_checks_with_raise_is_compared(tmp_path):
    # ``if ...: raise`` is a check too: the port may still refuse what upstream now accepts.
    before = BEFORE.replace('    tl.device_assert(BLOCK >= N, "one block must cover N")\n',
                            '    assert BLOCK >= 16, "a block of at least 16"\n')
    port = PORT.replace("def double(x):\n", "def double(x):\n    if x.dim() != 2:\n        raise ValueError(\"rows\")\n")
    port = port.replace("@triton.jit\ndef _double_rows", "@triton.jit\ndef _double_rows").replace(
        "def _double_rows(X, Y, N, BLOCK: tl.constexpr):\n",
        "def _double_rows(X, Y, N, BLOCK: tl.constexpr):\n    if N < 0:\n        raise ValueError(\"n\")\n")
    kernel = _kernel(tmp_path, before, AFTER, port)
    assert "port-lacks-check" not in kernel.rules, kernel.reason


def test_an_assertion_of_the_same_kind_kept_is_compared(tmp_path):
    # One of two assertions removed: upstream still asserts, the port asserts nothing; they do not agree yet.
    before = BEFORE.replace('    tl.device_assert(BLOCK >= N, "one block must cover N")\n',
                            '    tl.device_assert(BLOCK >= N, "one block must cover N")\n'
                            '    tl.device_assert(N > 0, "rows are not empty")\n')
    kernel = _kernel(tmp_path, before, BEFORE)
    assert "port-lacks-check" not in kernel.rules, kernel.reason
