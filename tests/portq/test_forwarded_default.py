"""A default that a parameter gains upstream on a definition this commit turned into a
dispatcher: the old body moved into a helper the definition now calls, and every path of
the definition either returns that call, with the parameter passed on unchanged, or raises.
The helper still takes the parameter with no default and no branch of it reads it, so a
call that omits the argument hands the default to the old body, which has no case for it:
upstream computes nothing for such a call that the port does not compute when passed the
same value, and the new default is no capability a caller can use (rule
``forwarded-default``, NEEDS_REVIEW rather than REAL_GAP). A default the dispatcher or the
helper acts on, a new parameter with no default, and a dispatcher whose other path returns
something else stay REAL_GAP."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "DEC"
title    = "Paged decode"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

BASE = '''\
import torch

import ext_paged


def decode(q, cache, plan, splits, scale=None):
    """Decode one step over the paged cache."""
    if scale is None:
        scale = q.shape[-1] ** (-0.5)
    out, lse = ext_paged.decode(q, cache, scale, plan, splits)
    return out, lse
'''

HELPER = '''\
import torch

import ext_paged_a


def decode_gen_a(q, cache, plan, splits, scale=None):
    """Decode one step over the paged cache."""
    if scale is None:
        scale = q.shape[-1] ** (-0.5)
    out, lse = ext_paged_a.decode(q, cache, scale, plan, splits)
    return out, lse

'''

DISPATCHER = HELPER + '''
def decode(q, cache, plan=None, splits=None, scale=None{extra}):
    generation = torch.cuda.get_device_capability(q.device.index)
{acting}    if generation == (9, 0):
        return decode_gen_a(q, cache, plan, splits, scale{passed})
    elif generation == (10, 0):
        {other}
    else:
        raise ValueError(f"unsupported device generation: {{generation}}")
'''

RAISES = 'raise ValueError(f"unsupported device generation: {generation}")'


def _dispatcher(extra="", acting="", passed="", other=RAISES, helper=None):
    text = DISPATCHER.format(extra=extra, acting=acting, passed=passed, other=other)
    return text if helper is None else text.replace(HELPER, helper)


TREE = {
    "kernels/paged.py": '''\
import torch


# portq: ports vllm:ops/paged.py::decode
def decode(q, cache, plan, splits, scale=None):
    if scale is None:
        scale = q.shape[-1] ** (-0.5)
    return paged_decode(q, cache, scale, plan, splits)
''',
    "engine/step.py": "from kernels.paged import decode\n\n\n"
                      "def step(q, cache, plan, splits):\n    return decode(q, cache, plan, splits)\n",
}


def _decode(tmp_path, after):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/paged.py": BASE}),
        CommitSpec("dispatch on the device generation", files={"ops/paged.py": after}),
    ], TREE, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "decode"), verdicts[1]


def test_a_default_forwarded_only_to_the_moved_body_that_requires_it_is_for_a_reader(tmp_path):
    symbol, verdict = _decode(tmp_path, _dispatcher())
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "forwarded-default" in symbol.rules, symbol.rules
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_default_the_dispatcher_acts_on_stays_a_gap(tmp_path):
    acting = "    if plan is None:\n        plan, splits = ext_paged_a.plan(cache)\n"
    symbol, _ = _decode(tmp_path, _dispatcher(acting=acting))
    assert symbol.verdict == REAL_GAP, symbol.reason
    assert "forwarded-default" not in symbol.rules


def test_a_default_the_moved_body_acts_on_stays_a_gap(tmp_path):
    helper = HELPER.replace("def decode_gen_a(q, cache, plan, splits, scale=None):",
                            "def decode_gen_a(q, cache, plan, splits, scale=None):\n"
                            "    if plan is None:\n        plan, splits = ext_paged_a.plan(cache)")
    symbol, _ = _decode(tmp_path, _dispatcher(helper=helper))
    assert symbol.verdict == REAL_GAP, symbol.reason
    assert "forwarded-default" not in symbol.rules


def test_a_new_parameter_without_a_default_stays_a_gap(tmp_path):
    helper = HELPER.replace("splits, scale=None):", "splits, scale=None, *, window):")
    symbol, _ = _decode(tmp_path, _dispatcher(extra=", *, window", passed=", window=window", helper=helper))
    assert symbol.verdict == REAL_GAP, symbol.reason


def test_a_dispatcher_whose_other_path_returns_stays_a_gap(tmp_path):
    symbol, _ = _decode(tmp_path, _dispatcher(other="return ext_paged_b.decode(q, cache, scale)"))
    assert symbol.verdict == REAL_GAP, symbol.reason
    assert "forwarded-default" not in symbol.rules
