"""Verdict rules on hand-built signatures and entries (DESIGN §5)."""
from __future__ import annotations

import pytest

from portq.classifier.classify import net_zero_pairs, rename_aliases
from portq.core.model import (
    IN_SYNC, INERT, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP, Commit, EntryChanges, FileChange, Hunk, SymbolVerdict,
)
from portq.classifier.verdicts import compare, entry_verdict
from portq.core.paths import non_code_kind
from portq.language.extraction import signature_of
from portq.language.symbols import symbol_table


def _sig(source: str, path: str, name: str):
    table = symbol_table(source.encode(), path)
    definition = next(d for d in table.definitions if d.name == name)
    return signature_of(definition, table.source, path)


CUDA_OLD = "void op(torch::Tensor const& src_cache, torch::Tensor const& token_to_seq, int64_t n) {\n  f(token_to_seq, n, src_cache);\n}\n"
CUDA_NEW = "void op(torch::Tensor const& src_cache, torch::Tensor const& token_to_seq, int64_t n,\n        std::optional<torch::Tensor> seq_starts = std::nullopt) {\n  (void)token_to_seq;\n  f(n, src_cache, seq_starts);\n}\n"
PORT_OLD = "def op(src_cache, token_to_seq, n):\n    return f(token_to_seq, n, src_cache)\n"
PORT_NEW = "def op(src_cache, n, seq_starts=None):\n    return f(n, src_cache, seq_starts)\n"


def _statuses(port_source):
    port = _sig(port_source, "k.py", "op")
    return {i.message.split(",")[0]: i.status for i in compare(_sig(CUDA_OLD, "a.cu", "op"), _sig(CUDA_NEW, "a.cu", "op"), port)}


def test_stale_cross_language_port_is_behind_on_dead_and_added_params():
    statuses = _statuses(PORT_OLD)
    assert statuses["token_to_seq is dead upstream"] == "behind"
    assert statuses["upstream added parameter seq_starts=default"] == "behind"


def test_ported_cross_language_port_is_in_sync_on_every_item():
    assert set(_statuses(PORT_NEW).values()) == {"sync"}


def test_not_carried_param_is_set_aside():
    port = _sig(PORT_OLD, "k.py", "op")
    items = compare(_sig(CUDA_OLD, "a.cu", "op"), _sig(CUDA_NEW, "a.cu", "op"), port, param_scope={"seq_starts"})
    assert {i.status for i in items if "seq_starts" in i.message} == {"not-carried"}


def test_grid_sharing_terms_with_both_sides_is_undecided():
    old = _sig("def w(x, n):\n    grid = (n,)\n    k[grid](x)\n", "u.py", "w")
    new = _sig("def w(x, m):\n    grid = (m,)\n    k[grid](x)\n", "u.py", "w")
    port = _sig("def w(x, n, m):\n    grid = (n * m,)\n    k[grid](x)\n", "t.py", "w")
    (grid,) = [i for i in compare(old, new, port) if "grid" in i.message]
    assert grid.status == "undecided" and "shares terms with both" in grid.message


def test_grid_shape_change_is_compared_by_arity():
    old = _sig("def w(x, b, h):\n    k[(b * h,)](x)\n", "u.py", "w")
    new = _sig("def w(x, b, h):\n    k[(b, h)](x)\n", "u.py", "w")
    port = _sig("def w(x, b, h):\n    k[(b * h,)](x)\n", "t.py", "w")
    shape = [i for i in compare(old, new, port) if "axes" in i.message]
    assert [i.status for i in shape] == ["behind"]


@pytest.mark.parametrize("path, kind", [
    ("tests/kernels/test_cache.py", "tests"), (".buildkite/test-pipeline.yaml", "CI"), (".github/CODEOWNERS", "CI"),
    ("CODEOWNERS", "build/docs"), ("README.md", "build/docs"), ("docs/design/mla.md", "docs"),
    ("benchmarks/kernels/bench_cache.py", "benchmarks"), ("CMakeLists.txt", "build/docs"),
    ("csrc/cache_kernels.cu", None), ("vllm/_custom_ops.py", None),
])
def test_non_code_paths(path, kind):
    assert non_code_kind(path) == kind


def _symbol_verdict(verdict, justification=None, path="a.cu", symbol="s"):
    return SymbolVerdict(path=path, symbol=symbol, change="modified", verdict=verdict, justification=justification,
                         decided_by="path", reason=f"{symbol} reason")


def test_entry_takes_the_most_severe_over_all_symbols_and_names_the_others():
    verdict = entry_verdict([
        _symbol_verdict(NOT_APPLICABLE, "not-carried", symbol="cp_gather_cache"),
        _symbol_verdict(INERT, symbol="gather"),
        _symbol_verdict(REAL_GAP, symbol="gather_wrapper"),
        _symbol_verdict(IN_SYNC, symbol="other"),
    ])
    assert verdict.verdict == REAL_GAP
    named = " ".join(e.message for e in verdict.evidence if e.kind == "symbol")
    assert "cp_gather_cache" in named and "NOT_APPLICABLE/not-carried" in named and "gather" in named


def test_all_not_applicable_entry_shows_the_coverage_hole_first():
    verdict = entry_verdict([_symbol_verdict(NOT_APPLICABLE, "non-code"), _symbol_verdict(NOT_APPLICABLE, "not-ported")])
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported")


def test_needs_review_outranks_inert():
    verdict = entry_verdict([_symbol_verdict(INERT), _symbol_verdict(NEEDS_REVIEW)])
    assert verdict.verdict == NEEDS_REVIEW


def _entry(position, changes):
    commit = Commit(sha=f"{position:040d}", parents=(), title="t", message="t", author="a", authored_at="now",
                    changes=changes)
    return EntryChanges(position=position, commit=commit)


def _change(removed, added, path="a.py", **extra):
    hunk = Hunk("@@ -1 +1 @@", 1, 1, 1, 1, (1,), (1,), (removed,), (added,))
    return FileChange("modified", path, path, hunks=[hunk], **extra)


def test_revert_pairs_with_its_change_and_a_byte_identical_reland_stands_alone():
    entries = [_entry(1, [_change("a", "b")]), _entry(2, [_change("b", "a")]), _entry(3, [_change("a", "b")])]
    pairs = net_zero_pairs(entries)
    assert pairs[1][0] == 2 and pairs[2][0] == 1 and 3 not in pairs


def test_reverting_the_reland_pairs_with_the_reland():
    entries = [_entry(i, [_change(*pair)]) for i, pair in enumerate([("a", "b"), ("b", "a"), ("a", "b"), ("b", "a")], 1)]
    pairs = net_zero_pairs(entries)
    assert (pairs[1][0], pairs[3][0]) == (2, 4)


def test_partial_revert_is_not_net_zero():
    entries = [_entry(1, [_change("a", "b"), _change("c", "d", path="b.py")]), _entry(2, [_change("b", "a")])]
    assert net_zero_pairs(entries) == {}


def _patched(path, old_blob, new_blob, removed, added):
    patch = (f"diff --git a/{path} b/{path}\nindex {old_blob}..{new_blob} 100644\n--- a/{path}\n+++ b/{path}\n"
             f"@@ -1 +1 @@\n-{removed}\n+{added}\n")
    return FileChange("modified", path, path, old_blob=old_blob, new_blob=new_blob, patch=patch)


def test_net_zero_pairing_parses_no_hunks_of_commits_no_other_commit_could_undo():
    entries = [_entry(1, [_patched("a.py", "1" * 40, "2" * 40, "a", "b")]),
               _entry(2, [_patched("b.py", "3" * 40, "4" * 40, "c", "d")])]
    assert net_zero_pairs(entries) == {}
    assert all(not change.hunks for entry in entries for change in entry.commit.changes)


def test_revert_that_swaps_the_blobs_pairs_without_parsing_hunks():
    entries = [_entry(1, [_patched("a.py", "1" * 40, "2" * 40, "a", "b")]),
               _entry(2, [_patched("a.py", "2" * 40, "1" * 40, "b", "a")])]
    assert net_zero_pairs(entries) == {1: (2, "2".zfill(40)), 2: (1, "1".zfill(40))}
    assert all(not change.hunks for entry in entries for change in entry.commit.changes)


def test_revert_after_other_changes_to_the_file_pairs_by_its_lines():
    entries = [_entry(1, [_patched("a.py", "1" * 40, "2" * 40, "a", "b")]),
               _entry(2, [_patched("a.py", "5" * 40, "6" * 40, "b", "a")])]
    assert net_zero_pairs(entries)[1][0] == 2


def test_renames_link_every_name_a_file_had():
    entries = [
        _entry(1, [FileChange("renamed", "csrc/a.cu", "csrc/stable/a.cu")]),
        _entry(2, [FileChange("renamed", "csrc/stable/a.cu", "csrc/stable/b.cu")]),
    ]
    aliases = rename_aliases(entries)
    assert aliases["csrc/a.cu"] == {"csrc/stable/a.cu", "csrc/stable/b.cu"}


def test_port_that_launches_through_a_helper_is_undecided_not_behind():
    old = _sig("def w(x, n):\n    k[(n,)](x)\n", "u.py", "w")
    new = _sig("def w(x, n):\n    k_flat[(n,)](x)\n", "u.py", "w")
    port = _sig("def w(x, n):\n    return _launch(x, n)\n", "t.py", "w")
    statuses = {i.status for i in compare(old, new, port) if i.layer == "launch"}
    assert "behind" not in statuses and "undecided" in statuses


def test_decomposition_sharing_nothing_with_either_side_is_undecided():
    kernel = "@triton.jit\ndef k(x, H, C):\n    pid = tl.program_id(0)\n{body}"
    old = _sig(kernel.format(body="    b = pid // H\n    h = pid % H\n"), "u.py", "k")
    new = _sig(kernel.format(body="    b = pid // H\n    h = pid % H\n    c = pid % C\n"), "u.py", "k")
    port = _sig(kernel.format(body="    t = pid // 7\n"), "t.py", "k")
    (item,) = [i for i in compare(old, new, port) if "program" in i.message]
    assert item.status == "undecided"


def test_triton_to_triton_constexpr_parameter_added_is_a_delta():
    old = _sig("@triton.jit\ndef k(x, B: tl.constexpr):\n    tl.store(x, B)\n", "u.py", "k")
    new = _sig("@triton.jit\ndef k(x, B: tl.constexpr, ROWS: tl.constexpr):\n    tl.store(x, B * ROWS)\n", "u.py", "k")
    stale = _sig("@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    tl.store(x_ptr, B)\n", "t.py", "k")
    assert [i.status for i in compare(old, new, stale) if "rows" in i.message] == ["behind"]


SAFE_KERNEL = "@triton.jit\ndef _k(x_ptr, counts_ptr, n, {extra}BLOCK: tl.constexpr):\n    pass\n\n\n"
SAFE_WRAPPER = "def w(x, counts, n):\n    _k[(n,)](x, counts, n, {extra}BLOCK=256)\n"


def _safe(extra_param: str, extra_argument: str, path: str):
    source = SAFE_KERNEL.format(extra=extra_param) + SAFE_WRAPPER.format(extra=extra_argument)
    return _sig(source, path, "w")


def _launch_statuses(port):
    old = _safe("", "", "u.py")
    new = _safe("counts_stride, ", "counts.stride(0), ", "u.py")
    return [(i.status, i.message) for i in compare(old, new, port) if i.layer == "launch"]


def test_launch_gaining_an_argument_the_port_passes_is_in_sync():
    port = _safe("counts_stride, ", "counts.stride(0), ", "t.py")
    assert _launch_statuses(port) == [("sync", "the port's launch already passes counts_stride")]


def test_launch_gaining_an_argument_the_port_does_not_pass_is_behind():
    (status, message), = _launch_statuses(_safe("", "", "t.py"))
    assert status == "behind" and "counts_stride" in message


def test_launch_gaining_a_keyword_is_compared_by_the_parameter_it_binds_to():
    old = _sig(SAFE_KERNEL.format(extra="") + SAFE_WRAPPER.format(extra=""), "u.py", "w")
    new = _sig(SAFE_KERNEL.format(extra="ROWS: tl.constexpr, ") + SAFE_WRAPPER.format(extra="ROWS=64, "), "u.py", "w")
    synced = _sig(SAFE_KERNEL.format(extra="ROWS: tl.constexpr, ") + SAFE_WRAPPER.format(extra="ROWS=rows, "), "t.py", "w")
    assert [i.status for i in compare(old, new, synced) if i.layer == "launch"] == ["sync"]
    assert [i.status for i in compare(old, new, old) if i.layer == "launch"] == ["behind"]


def test_port_launching_a_kernel_of_another_file_binds_through_the_index():
    from portq.tree.tree_index import TreeIndex

    index = TreeIndex.from_sources({"t/kernel.py": SAFE_KERNEL.format(extra="counts_stride, ")})
    port = _sig("from t.kernel import _k\n\n\n" + SAFE_WRAPPER.format(extra="counts.stride(0), "), "t/wrap.py", "w")
    old, new = _safe("", "", "u.py"), _safe("counts_stride, ", "counts.stride(0), ", "u.py")
    assert [i.status for i in compare(old, new, port, index) if i.layer == "launch"] == ["sync"]


def test_constexpr_parameter_deltas_are_flagged_as_constexpr():
    old = _sig("@triton.jit\ndef k(x, B: tl.constexpr):\n    tl.store(x, B)\n", "u.py", "k")
    new = _sig("@triton.jit\ndef k(x, B: tl.constexpr, ROWS: tl.constexpr):\n    tl.store(x, B * ROWS)\n", "u.py", "k")
    (item,) = [i for i in compare(old, new, new) if "rows" in i.message]
    assert item.status == "sync" and "constexpr parameter rows" in item.evidence[0].message


HELPER_PORT = SAFE_KERNEL.format(extra="ROWS: tl.constexpr, ") + '''def _launch(x, counts, n, rows):
    _k[(n,)](x, counts, n, {keyword}BLOCK=256)


def w(x, counts, n, rows=None):
    _launch(x, counts, n, rows)
'''


def test_port_launching_through_a_same_module_helper_is_compared_at_the_helpers_launch():
    old = _sig(SAFE_KERNEL.format(extra="") + SAFE_WRAPPER.format(extra=""), "u.py", "w")
    new = _sig(SAFE_KERNEL.format(extra="ROWS: tl.constexpr, ") + SAFE_WRAPPER.format(extra="ROWS=64, "), "u.py", "w")
    synced = _sig(HELPER_PORT.format(keyword="ROWS=rows, "), "t.py", "w")
    stale = _sig(HELPER_PORT.format(keyword=""), "t.py", "w")
    assert [i.status for i in compare(old, new, synced) if i.layer == "launch"] == ["sync"]
    (item,) = [i for i in compare(old, new, stale) if i.layer == "launch"]
    assert item.status == "behind" and item.evidence[-1].quote == "_k[(n,)](x, counts, n, BLOCK=256)"


def test_a_syntax_error_is_located_by_every_line_it_spans():
    from portq.classifier.reading import _error_spans
    from portq.language.symbols import parse

    source = b"void f() {\n  launch(<<<a,\n    b,\n    c>>>);\n  int ok = 1;\n}\n"
    spans = _error_spans(parse(source, "cpp").root_node)
    assert spans and spans[0][0] == 2 and spans[0][1] >= 4  # a change on line 4 is inside it, not 2 lines away
