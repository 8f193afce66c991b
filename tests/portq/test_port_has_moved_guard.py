"""An empty-input guard upstream moves from a wrapper into the host it calls
(``if x.numel() > 0: host(x, ...)`` becomes ``host(x, ...)``, and the host
gains ``if x.numel() == 0: return`` after its checks), where the port's host
already returns on that test and its wrapper already calls it unguarded: the
port already has the change (``port-has-change``, IN_SYNC). A port without
the guard, or one whose guard tests something else, stays NEEDS_REVIEW."""
from __future__ import annotations

from portq.core.model import IN_SYNC, NEEDS_REVIEW
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

HOST = "pkg/ops.py"
MATRIX = """\
[[row]]
id       = "OPS"
title    = "A wrapper and the host op it calls"
upstream = "vllm"
paths    = ["pkg/ops.py"]
tree     = ["mine/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import torch


def _host(x, out, eps=1e-6):
    assert x.dim() == 2, "x must be 2D"
    if out is not None:
        assert out.shape == x.shape
    out.copy_(x * eps)


def wrapper(x, eps=1e-6):
    out = torch.empty_like(x)
    if x.numel() > 0:
        _host(x, out, eps)
    return out
'''
AFTER = BEFORE.replace('''        assert out.shape == x.shape
''', '''        assert out.shape == x.shape
    if x.numel() == 0:
        return
''').replace('''    if x.numel() > 0:
        _host(x, out, eps)
''', '''    _host(x, out, eps)
''')

PORT = '''\
import torch


# portq: ports vllm:pkg/ops.py::_host
def host_op(t, dst, eps=1e-6):
    if t.dim() != 2:
        raise ValueError("t: expected 2-D")
    if t.numel() == 0:
        return  # nothing to do
    dst.copy_(t * eps)


# portq: ports vllm:pkg/ops.py::wrapper
def norm(t, eps=1e-6):
    dst = torch.empty_like(t)
    host_op(t, dst, eps)
    return dst
'''
UNGUARDED_PORT = PORT.replace("    if t.numel() == 0:\n        return  # nothing to do\n", "")
GUARDED_WRAPPER_PORT = PORT.replace("    host_op(t, dst, eps)\n", "    if t.numel() > 0:\n        host_op(t, dst, eps)\n")
OTHER_TEST_PORT = PORT.replace("if t.numel() == 0:", "if t.shape[0] == 0:")


def _one_commit(tmp_path, port):
    tree = {"mine/ops.py": port,
            "engine/use.py": "from mine.ops import norm\n\n\ndef forward(x):\n    return norm(x)\n"}
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, tree, matrix=MATRIX, message="move the guard")


def test_a_guard_moved_where_the_port_has_it_is_in_sync(tmp_path):
    verdict = _one_commit(tmp_path, PORT)
    assert verdict.verdict == IN_SYNC, verdict.reason
    assert "port-has-change" in verdict.rules, verdict.rules


def test_a_port_without_the_guard_stays_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, UNGUARDED_PORT)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_port_guarding_on_another_test_stays_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, OTHER_TEST_PORT)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_port_wrapper_still_guarding_its_call_stays_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, GUARDED_WRAPPER_PORT)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    wrapper = next(s for s in verdict.symbols if s.symbol == "wrapper")
    assert wrapper.verdict == NEEDS_REVIEW, wrapper.reason


def test_a_guard_placed_after_work_stays_for_a_reader(tmp_path):
    # Upstream returns only after writing out; the port returns before: the early exit skips other work.
    after = AFTER.replace("    if x.numel() == 0:\n        return\n", "    out.zero_()\n    if x.numel() == 0:\n        return\n")
    tree = {"mine/ops.py": PORT,
            "engine/use.py": "from mine.ops import norm\n\n\ndef forward(x):\n    return norm(x)\n"}
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HOST: BEFORE}), CommitSpec("move the guard", files={HOST: after})],
        tree, matrix=MATRIX)
    host = next(s for s in verdicts[1].symbols if s.symbol == "_host")
    assert host.verdict == NEEDS_REVIEW, host.reason
