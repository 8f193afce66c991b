"""A ported definition upstream renames more than once in a range stays the port's through every step of the
chain (rule ``moved-definition``, each step as strong as a single rename): a change under its latest name is the
port's; its removal under a later name is not yet (two strict expected failures pin that gap). A step that is no longer the same definition (a body
rewritten under another name with a parameter dropped) ends the chain, as it ends a single rename; a different
definition added later under a name the chain left behind is a sibling, not the port's."""
from __future__ import annotations

import pytest

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def _fixed(source: str) -> str:
    return source.replace("mask=mask)\n", "mask=mask & (row >= 0))\n")


def test_a_change_under_the_name_a_second_rename_gave_is_the_ports(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename", files={"ops/norm.py": norm_module("_norm_fwd_kernel")}),
        CommitSpec("rename again", files={"ops/norm.py": norm_module("_rms_fwd_kernel")}),
        CommitSpec("fix the mask", files={"ops/norm.py": _fixed(norm_module("_rms_fwd_kernel"))}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "_rms_fwd_kernel")
    assert later.verdict in FLAGGED and "moved-definition" in later.rules, later.reason
    assert "_norm_fwd" in later.reason and later.ports


@pytest.mark.xfail(strict=True, reason="a carrier removed with no move followed is not yet decided as the removal "
                   "of the ported definition: reading every such removal so also flagged a carrier whose body its "
                   "caller absorbed (absorbed-callee), which is no removal; pinned until the two are told apart")
def test_the_removal_of_a_definition_renamed_twice_is_the_removal_of_the_ported_one(tmp_path):
    gone = norm_module("_rms_fwd_kernel").split("@triton.jit")[0] + "\n\ndef norm(x, w):\n    return x\n"
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename", files={"ops/norm.py": norm_module("_norm_fwd_kernel")}),
        CommitSpec("rename again", files={"ops/norm.py": norm_module("_rms_fwd_kernel")}),
        CommitSpec("drop the kernel", files={"ops/norm.py": gone}),
    ], TREE, matrix=MATRIX)
    removed = _symbol(verdicts[3], "_rms_fwd_kernel")
    assert removed.verdict in FLAGGED, removed.reason
    assert "moved-definition" in removed.rules and "_norm_fwd" in removed.reason, removed.reason
    assert removed.ports


def test_a_different_definition_under_a_name_the_chain_left_is_a_sibling(tmp_path):
    other = '''

@triton.jit
def _norm_fwd_kernel(a_ptr, n):
    i = tl.program_id(0)
    tl.store(a_ptr + i, tl.load(a_ptr + i) * 2.0)
'''
    twice = norm_module("_rms_fwd_kernel")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename", files={"ops/norm.py": norm_module("_norm_fwd_kernel")}),
        CommitSpec("rename again", files={"ops/norm.py": twice}),
        CommitSpec("another kernel", files={"ops/norm.py": twice + other}),
        CommitSpec("change it", files={"ops/norm.py": twice + other.replace("* 2.0", "* 3.0")}),
    ], TREE, matrix=MATRIX)
    sibling = _symbol(verdicts[4], "_norm_fwd_kernel")
    assert sibling.verdict == NOT_APPLICABLE and sibling.justification == "not-ported", sibling.reason
    assert "moved-definition" not in sibling.rules


def test_a_rewrite_under_another_name_dropping_a_parameter_ends_the_chain(tmp_path):
    rewritten = norm_module("_norm_fwd_kernel").replace("def _norm_fwd_kernel(x_ptr, w_ptr, y_ptr, n_cols,",
                                                        "def _rms_kernel(x_ptr, y_ptr, n_cols,") \
        .replace("    w = tl.load(w_ptr + cols, mask=mask, other=0.0)\n", "    w = 1.0\n") \
        .replace("_norm_fwd_kernel[(n_rows,)](x, w, y,", "_rms_kernel[(n_rows,)](x, y,")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename", files={"ops/norm.py": norm_module("_norm_fwd_kernel")}),
        CommitSpec("rewrite", files={"ops/norm.py": rewritten}),
        CommitSpec("fix the mask", files={"ops/norm.py": _fixed(rewritten)}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "_rms_kernel")
    assert "moved-definition" not in later.rules, later.rules


@pytest.mark.xfail(strict=True, reason="a carrier removed with no move followed is not yet decided as the removal "
                   "of the ported definition: reading every such removal so also flagged a carrier whose body its "
                   "caller absorbed (absorbed-callee), which is no removal; pinned until the two are told apart")
def test_a_definition_first_seen_with_the_removal_of_a_twice_renamed_carrier_is_its_lost_anchors_candidate(tmp_path):
    gone = norm_module("_rms_fwd_kernel").split("@triton.jit")[0] + "\n\ndef norm(x, w):\n    return x\n"
    fresh = '''import triton
import triton.language as tl


@triton.jit
def _rms_tile_kernel(a_ptr, b_ptr, n):
    i = tl.program_id(0)
    tl.store(b_ptr + i, tl.load(a_ptr + i) * 2.0)
'''
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename", files={"ops/norm.py": norm_module("_norm_fwd_kernel")}),
        CommitSpec("rename again", files={"ops/norm.py": norm_module("_rms_fwd_kernel")}),
        CommitSpec("rewrite elsewhere", files={"ops/norm.py": gone, "ops/utils/tiles.py": fresh}),
        CommitSpec("change it", files={"ops/utils/tiles.py": fresh.replace("* 2.0", "* 3.0")}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[4], "_rms_tile_kernel")
    assert later.verdict in FLAGGED and "lost-anchor-successor" in later.rules, later.reason
