"""Tricky cases 45-46 (docs/tricky-cases.md) through the real scan: derived
launch arguments are implementation detail, and a change one call down from a
ported wrapper is compared with what the port does there."""
from __future__ import annotations

from portq.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden import interface_cases as cases
from tests.portq.golden.pipeline import classify_history


def _one_commit(tmp_path, path, before, after, tree, message="change"):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={path: before}), CommitSpec(message, files={path: after})], tree)
    return verdicts[1]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def _messages(symbol) -> list[str]:
    return [e.message for e in symbol.evidence]


# --- 45: derived launch arguments ------------------------------------------------------


def test_derived_tile_constexprs_are_typed_derived_never_lacking(tmp_path):
    verdict = _one_commit(tmp_path, cases.DERIVED_HOST, cases.DERIVED_BEFORE, cases.DERIVED_AFTER,
                          cases.derived_tree(), message="tile the rows")
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    for name in ("scale_rows", "_scale_rows_kernel"):
        symbol = _symbol(verdict, name)
        assert symbol.verdict == NEEDS_REVIEW, (name, symbol.reason)
        assert not any("lack" in m for m in _messages(symbol)), (name, _messages(symbol))
        derived = {e.subject: e for e in symbol.evidence if e.kind == "derivation"}
        assert set(derived) >= {"block_t", "split"}, (name, _messages(symbol))
        assert derived["block_t"].quote == "BLOCK_T = 32" and derived["block_t"].side == "upstream-new"
        assert "split = triton.next_power_of_2(t) // BLOCK_T" in derived["split"].quote
        assert "t (already passed to the kernel)" in derived["split"].derived_from
    host = _symbol(verdict, "scale_rows")
    assert "computed only from shapes, constants and values the kernel already receives" in host.reason, host.reason
    assert "block_t (BLOCK_T=BLOCK_T) via `BLOCK_T = 32`" in host.reason, host.reason
    tree = [e for e in host.evidence if e.kind == "tree-launch" and "derived upstream" in e.message]
    assert tree and tree[0].path == "kernels/mla_prefix/rows.py"


def test_a_tile_size_the_caller_supplies_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, cases.DERIVED_HOST, cases.DERIVED_BEFORE, cases.SUPPLIED_AFTER,
                          cases.derived_tree(), message="let callers pick the tile")
    assert verdict.verdict == REAL_GAP, verdict.reason
    host = _symbol(verdict, "scale_rows")
    assert any("the port's launch lacks block_t" in m for m in _messages(host)), _messages(host)
    assert not any(e.kind == "derivation" and e.subject == "block_t" for e in host.evidence)
