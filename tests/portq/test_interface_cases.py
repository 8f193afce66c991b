"""Tricky cases 45-46 (docs/tricky-cases.md) through the real scan: derived
launch arguments are implementation detail, and a change one call down from a
ported wrapper is compared with what the port does there."""
from __future__ import annotations

from portq.core.model import IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP
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


# --- 46: a new path one call down ----------------------------------------------------


def _records(verdict, kind):
    return [e for e in verdict.evidence if e.kind == kind]


def test_a_new_path_in_an_unported_helper_the_port_still_raises_on_is_real_gap(tmp_path):
    verdict = _one_commit(tmp_path, cases.CALLEE_HOST, cases.CALLEE_BEFORE, cases.CALLEE_AFTER, cases.callee_tree(),
                          message="NEOX")
    assert verdict.verdict == REAL_GAP, verdict.reason
    helper = _symbol(verdict, "_launch")
    assert (helper.verdict, helper.decided_by) == (REAL_GAP, "launch"), helper.reason
    assert "for style == Style.NEOX (0)" in helper.reason and "still raises NotImplementedError for style = 0" \
        in helper.reason, helper.reason
    paths = {(e.side, e.line): e for e in _records(helper, "callee-path")}
    old = CALLEE_LINES(cases.CALLEE_BEFORE)
    new = CALLEE_LINES(cases.CALLEE_AFTER)
    raised = old.index('            raise NotImplementedError("NEOX is not implemented")') + 1
    launched = new.index("            _neox_kernel[grid](x, n, BLOCK=64)") + 1
    called = new.index("    return _launch(x, out, None, style, fused)") + 1
    assert set(paths) == {("upstream-old", raised), ("upstream-new", launched), ("upstream-new", called)}, paths
    assert paths[("upstream-new", launched)].before.line == raised
    tree = _records(helper, "tree-path")
    port = CALLEE_LINES(cases.callee_tree()["kernels/mla_prefix/rotate.py"])
    assert tree and (tree[0].path, tree[0].line) == ("kernels/mla_prefix/rotate.py",
                                                      port.index("        raise NotImplementedError('only GPT-J')") + 1)
    assert any(e.kind == "caller" and e.path == "kernels/mla_prefill/prepare.py" for e in helper.evidence)


def CALLEE_LINES(text: str) -> list[str]:
    return text.splitlines()


def test_a_port_that_already_launches_for_the_value_is_in_sync(tmp_path):
    verdict = _one_commit(tmp_path, cases.CALLEE_HOST, cases.CALLEE_BEFORE, cases.CALLEE_AFTER,
                          cases.callee_tree(cases.HANDLES_NEOX), message="NEOX")
    helper = _symbol(verdict, "_launch")
    assert helper.verdict == IN_SYNC, helper.reason
    assert "already launches _triple for style = 0" in helper.reason, helper.reason
    assert verdict.verdict != REAL_GAP


def test_a_port_whose_side_cannot_be_resolved_needs_review_with_the_reason(tmp_path):
    verdict = _one_commit(tmp_path, cases.CALLEE_HOST, cases.CALLEE_BEFORE, cases.CALLEE_AFTER,
                          cases.callee_tree(cases.UNDECIDABLE), message="NEOX")
    helper = _symbol(verdict, "_launch")
    assert helper.verdict == NEEDS_REVIEW, helper.reason
    assert "launches or raises only under conditions it could not decide" in helper.reason, helper.reason
    verdict = _one_commit(tmp_path / "renamed", cases.CALLEE_HOST, cases.CALLEE_BEFORE, cases.CALLEE_AFTER,
                          cases.callee_tree(param="mode"), message="NEOX")
    helper = _symbol(verdict, "_launch")
    assert helper.verdict == NEEDS_REVIEW, helper.reason
    assert "no parameter of the port's rotate_pairs stands for style" in helper.reason, helper.reason


def test_a_helper_change_that_opens_no_new_path_stays_not_ported(tmp_path):
    verdict = _one_commit(tmp_path, cases.CALLEE_HOST, cases.CALLEE_BEFORE, cases.CALLEE_GPTJ_SWAP,
                          cases.callee_tree(), message="bigger blocks")
    helper = _symbol(verdict, "_launch")
    assert (helper.verdict, helper.justification) == (NOT_APPLICABLE, "not-ported"), helper.reason


def test_a_helper_imported_from_a_sibling_module_is_followed(tmp_path):
    commits = [CommitSpec("base", files={cases.CALLEE_HOST: cases.IMPORTING_HOST_BEFORE,
                                         cases.HELPERS: cases.IMPORTED_HELPERS_BEFORE}),
               CommitSpec("NEOX", files={cases.CALLEE_HOST: cases.IMPORTING_HOST_AFTER,
                                         cases.HELPERS: cases.IMPORTED_HELPERS_AFTER})]
    verdicts, _ = classify_history(tmp_path, commits, cases.callee_tree())
    helper = next(s for s in verdicts[1].symbols if s.symbol == "_launch")
    assert (helper.path, helper.verdict) == (cases.HELPERS, REAL_GAP), helper.reason
    called = [e for e in helper.evidence if e.kind == "callee-path" and e.symbol == "rotate"]
    assert called and called[0].path == cases.CALLEE_HOST


def test_a_port_launching_its_one_kernel_for_every_value_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, cases.CALLEE_HOST, cases.CALLEE_BEFORE, cases.CALLEE_AFTER,
                          cases.callee_tree(""), message="NEOX")
    helper = _symbol(verdict, "_launch")
    assert helper.verdict == NEEDS_REVIEW, helper.reason
    assert "launches _double for style = 0 as for its other values" in helper.reason, helper.reason


def test_a_new_path_one_call_down_respects_a_pin_that_contains_the_commit(tmp_path):
    from tests.portq.fixtures import build_repository

    commits = [CommitSpec("base", files={cases.CALLEE_HOST: cases.CALLEE_BEFORE}),
               CommitSpec("NEOX", files={cases.CALLEE_HOST: cases.CALLEE_AFTER})]
    shas = build_repository(tmp_path / "probe", commits)
    tree = cases.callee_tree()
    port = tree["kernels/mla_prefix/rotate.py"]
    tree["kernels/mla_prefix/rotate.py"] = port.replace("::rotate\n", f"::rotate @{shas[1][:12]}\n")
    verdicts, _ = classify_history(tmp_path, commits, tree)
    helper = _symbol(verdicts[1], "_launch")
    assert (helper.verdict, helper.decided_by) == (IN_SYNC, "provenance"), helper.reason
    assert verdicts[1].verdict != REAL_GAP
    tree["kernels/mla_prefix/rotate.py"] = port.replace("::rotate\n", f"::rotate @{shas[0][:12]}\n")
    verdicts, _ = classify_history(tmp_path / "older", commits, tree)
    helper = _symbol(verdicts[1], "_launch")
    assert helper.verdict == REAL_GAP, helper.reason
    assert any(e.kind == "pin" and "does not contain" in e.message for e in helper.evidence)


def test_a_helper_that_does_not_parse_never_decides_a_gap(tmp_path):
    broken = cases.CALLEE_AFTER.replace("            _neox_kernel[grid](x, n, BLOCK=64)",
                                        "            _neox_kernel[grid](x, n, BLOCK=64)\n            ))) = ;;")
    verdict = _one_commit(tmp_path, cases.CALLEE_HOST, cases.CALLEE_BEFORE, broken, cases.callee_tree(),
                          message="NEOX, half typed")
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    helper = _symbol(verdict, "_launch")
    assert helper.verdict == NEEDS_REVIEW and ("parse" in helper.reason), helper.reason
