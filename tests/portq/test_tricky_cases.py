"""Golden tricky cases (docs/tricky-cases.md), end to end: a GitPython
upstream history, an in-tree directory, the matrix, and the classifier the
scan uses. Each test names the case and the verdict it must get."""
from __future__ import annotations

import pytest

from portq.model import FLAGGED, IN_SYNC, INERT, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden import seed000
from tests.portq.golden.pipeline import classify_history

UPSTREAM_CU = "csrc/cache_kernels.cu"


def _seed000(tmp_path, tree):
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={UPSTREAM_CU: seed000.BASE}), CommitSpec(seed000.TITLE, files={UPSTREAM_CU: seed000.AFTER})],
        tree,
    )
    return verdicts[1]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_seed000_two_half_commit_is_real_gap_with_a_production_caller(tmp_path):
    verdict = _seed000(tmp_path, seed000.STALE_TREE)
    assert verdict.verdict == REAL_GAP
    wrapper = _symbol(verdict, "gather_and_maybe_dequant_cache")
    assert wrapper.verdict == REAL_GAP
    callers = [e for e in wrapper.evidence if e.kind == "caller"]
    assert callers[0].path == "kernels/mla_prefill/chunked_context.py" and callers[0].line == 6
    assert "gather_and_maybe_dequant_cache(" in callers[0].quote


def test_seed000_evidence_names_both_halves(tmp_path):
    verdict = _seed000(tmp_path, seed000.STALE_TREE)
    sibling = _symbol(verdict, "cp_gather_cache")
    assert (sibling.verdict, sibling.justification) == (NOT_APPLICABLE, "not-carried")
    messages = " ".join(e.message for e in verdict.evidence)
    assert "cp_gather_cache" in messages and "not-carried" in messages
    assert any(e.hunk_header and "gather_and_maybe_dequant_cache" in e.hunk_header for e in verdict.evidence)


def test_seed000_dead_token_to_seq_is_cited_in_tree_and_upstream(tmp_path):
    wrapper = _symbol(_seed000(tmp_path, seed000.STALE_TREE), "gather_and_maybe_dequant_cache")
    dead = [e for e in wrapper.evidence if e.kind == "param-dead"]
    assert dead and dead[0].side == "upstream-new"
    uses = [e for e in wrapper.evidence if e.kind == "tree-use"]
    assert uses[0].path == "kernels/kv_cache/gather.py" and "token_to_seq" in uses[0].quote


def test_seed000_launch_rewrite_is_a_launch_delta(tmp_path):
    wrapper = _symbol(_seed000(tmp_path, seed000.STALE_TREE), "gather_and_maybe_dequant_cache")
    grids = [e for e in wrapper.evidence if e.kind == "launch-grid" and e.side == "upstream-new"]
    assert grids and "ceil_div(num_tokens, block_size) + 2 * num_reqs" in grids[0].message
    tree = [e for e in wrapper.evidence if e.kind == "tree-launch"]
    assert any("grid" in e.message and "num_tokens," in e.message for e in tree)


def test_seed000_against_a_tree_that_already_dropped_it_is_in_sync(tmp_path):
    verdict = _seed000(tmp_path, seed000.SYNCED_TREE)
    assert verdict.verdict == IN_SYNC
    assert _symbol(verdict, "gather_and_maybe_dequant_cache").verdict == IN_SYNC


def test_seed000_against_a_tree_only_tests_call_is_inert(tmp_path):
    verdict = _seed000(tmp_path, seed000.TESTS_ONLY_TREE)
    assert verdict.verdict == INERT
    callers = [e for e in verdict.evidence if e.kind == "caller"]
    assert callers and all(e.path.startswith("tests/") for e in callers)
