"""Work the classifier leaves undone because no decision reads it: the
verdicts and evidence are those of the full computation, only cheaper
(the cost itself is measured by ``benchmarks/bench_classify.py``)."""
from __future__ import annotations

import pytest

from portq.core.model import IN_SYNC, NEEDS_REVIEW
import portq.classifier.classify
import portq.classifier.verdicts
from tests.portq.fixtures import CommitSpec, build_repository
from tests.portq.golden.pipeline import MATRIX, classify_history
from tests.portq.test_dispatch_branches import BASE, FP4_BRANCH, WRAPPER, _tree

COMMITS = [CommitSpec("base", files={WRAPPER: BASE}), CommitSpec("FP4 path", files={WRAPPER: FP4_BRANCH}),
           CommitSpec("later", files={"README.md": "x\n"})]


def test_a_port_pinned_past_the_commit_computes_no_upstream_signature(tmp_path, monkeypatch):
    shas = build_repository(tmp_path / "probe", COMMITS)
    monkeypatch.setattr(portq.classifier.verdicts, "signature_of", lambda *a, **k: pytest.fail("an upstream signature computed"))
    verdicts, _ = classify_history(tmp_path / "pinned", COMMITS, _tree(pin=f" @{shas[2][:10]}"))
    assert (verdicts[1].verdict, verdicts[1].decided_by) == (IN_SYNC, "provenance")


def test_the_same_port_unpinned_still_computes_and_compares_them(tmp_path, monkeypatch):
    computed = []
    real = portq.classifier.verdicts.signature_of
    monkeypatch.setattr(portq.classifier.verdicts, "signature_of", lambda *a, **k: computed.append(a[0].name) or real(*a, **k))
    verdicts, _ = classify_history(tmp_path, COMMITS, _tree())
    assert verdicts[1].verdict == NEEDS_REVIEW
    assert computed.count("gather_kv_b_proj") == 2  # the old side and the new


def test_the_blobs_a_scan_classifies_are_read_ahead_in_one_round_trip(tmp_path, monkeypatch):
    usual, _ = classify_history(tmp_path / "usual", COMMITS, _tree())
    batches = []
    real_init = portq.classifier.classify.StructuralClassifier.__init__

    def one_by_one_fails(classifier, context, *args, **kwargs):
        real_init(classifier, context, *args, **kwargs)
        read_blobs = context.read_blobs
        context.read_blob = lambda sha: pytest.fail(f"blob {sha[:10]} read on its own")
        context.read_blobs = lambda shas: batches.append(list(shas)) or read_blobs(shas)

    monkeypatch.setattr(portq.classifier.classify.StructuralClassifier, "__init__", one_by_one_fails)
    ahead, _ = classify_history(tmp_path / "ahead", COMMITS, _tree())
    assert {k: v.to_json() for k, v in ahead.items()} == {k: v.to_json() for k, v in usual.items()}
    assert len(batches) == 1 and len(batches[0]) >= 2  # both sides of the wrapper, in one request


LAUNCHES = b'''import triton


@triton.jit
def kernel(x, y, n, BLOCK: tl.constexpr):
    pass


def wrapper(x, y, n):
    kernel[(n,)](x, y, n, BLOCK=64)
    kernel[(n, 2)](x, y, n, BLOCK=128)
    kernel[(1,)](y, x, n, BLOCK=32)
'''


def test_a_signature_walks_its_files_definitions_once_however_many_launches_ask(monkeypatch):
    from portq.language.extraction import signature_of
    from portq.language.symbols import symbol_table
    import portq.language.symbols

    table = symbol_table(LAUNCHES, "ops.py")
    wrapper = next(d for d in table.definitions if d.name == "wrapper")
    walks = []
    real = portq.language.symbols.definitions_in
    monkeypatch.setattr(portq.language.symbols, "definitions_in", lambda *a: walks.append(a) or real(*a))
    signature = signature_of(wrapper, table.source, "ops.py")
    assert [launch.bound for launch in signature.launches] == [("x", "y", "n", "block")] * 3
    assert len(walks) == 1


def test_an_unported_cpp_definition_beside_a_port_builds_no_symbol_table_when_both_sides_parse(tmp_path, monkeypatch):
    import portq.language.symbols
    from tests.portq.golden import reimplemented as r

    helper = "\n\nint unrelated(int a) {{ return a + {}; }}\n"
    commits = [CommitSpec("base", files={r.CU: r.GRID_BEFORE + helper.format(1)}),
               CommitSpec("helper", files={r.CU: r.GRID_BEFORE + helper.format(2)})]
    tables = []
    real = portq.language.symbols.SymbolTableCache.get
    monkeypatch.setattr(portq.language.symbols.SymbolTableCache, "get", lambda *a, **k: tables.append(a[1]) or real(*a, **k))
    verdicts, _ = classify_history(tmp_path, commits, r.grid_tree(r.GRID_PORT_OLD))
    (symbol,) = verdicts[1].symbols
    assert (symbol.symbol, symbol.verdict) == ("unrelated", "NOT_APPLICABLE")
    assert tables == []  # its parse was checked for errors, and no definition list was built for it


def test_a_helper_the_port_uses_that_stops_parsing_is_still_read_as_broken(tmp_path):
    uses = BASE.replace("heads = k_prefix.shape[1]", "heads = helper(k_prefix.shape[1])")
    before, after = "def helper(a):\n    return a + 1\n\n\n", "def helper(a):\n    return a + * 1\n\n\n"
    commits = [CommitSpec("base", files={WRAPPER: before + uses}), CommitSpec("helper", files={WRAPPER: after + uses})]
    verdicts, _ = classify_history(tmp_path, commits, _tree())
    assert [s.symbol for s in verdicts[1].symbols] == ["helper"]
    assert verdicts[1].verdict == NEEDS_REVIEW, verdicts[1].reason
    assert f"parse failed at {WRAPPER}:2 (upstream-new)" in verdicts[1].reason


def test_a_changed_python_helper_in_a_file_no_anchor_names_builds_no_modules_to_follow(tmp_path, monkeypatch):
    other = "aiter/ops/triton/other.py"
    commits = [CommitSpec("base", files={WRAPPER: BASE, other: "def helper(a):\n    return a + 1\n"}),
               CommitSpec("helper", files={other: "def helper(a):\n    return a + 2\n"})]
    matrix = MATRIX.replace('"aiter/ops/triton/gather_kv_b_proj.py",',
                            '"aiter/ops/triton/gather_kv_b_proj.py", "aiter/ops/triton/other.py",')
    monkeypatch.setattr(portq.classifier.verdicts.SymbolClassifier, "_upstream_modules",
                        lambda *a: pytest.fail("modules built for a file no anchor names"))
    verdicts, _ = classify_history(tmp_path, commits, _tree(), matrix)
    (symbol,) = verdicts[1].symbols
    assert (symbol.symbol, symbol.verdict, symbol.justification) == ("helper", "NOT_APPLICABLE", "not-ported")
