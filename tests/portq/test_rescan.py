"""Rescans reuse decisions whose inputs are unchanged, and decide again exactly the rest."""
from __future__ import annotations

import json

import pytest

from portq.cli import main
from portq.ledger.store import open_ledger
from portq.tree.tree_index import TreeIndex
import portq.classifier.decision_keys
import portq.classifier.verdicts
import portq.pipeline.scan
import portq.upstream.history
from tests.portq.fixtures import SAMPLE_ENTRY_ORDER, SAMPLE_MATRIX, build_sample_upstream

CACHE_PORT = """\
// portq: ports up:csrc/cache_kernels.cu::gather_cache_kernel
template <typename scalar_t>
__global__ void gather_cache_kernel(const scalar_t* src, scalar_t* dst, const int* token_to_seq, int n) {
  int i = blockIdx.x;
  dst[i] = src[token_to_seq[i]];
}
"""

SPARSE_PORT = """\
import triton
import triton.language as tl


# portq: ports up:vllm/sparse_utils.py::convert_index
def convert_index(req, out):
    return out
"""



def owned_by(document, row) -> set[int]:
    return {e["entry"] for e in document["entries"] if row in e["rows"]}


def touching(document, suffix) -> set[int]:
    return {e["entry"] for e in document["entries"] if any(s["path"].endswith(suffix) for s in e["symbols"])}


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    path = tmp_path_factory.mktemp("rescan") / "up"
    build_sample_upstream(path)
    return path


@pytest.fixture
def workspace(tmp_path, upstream, monkeypatch):
    """A port with one anchored file per row."""
    (tmp_path / "port" / "cache").mkdir(parents=True)
    (tmp_path / "port" / "sparse").mkdir()
    (tmp_path / "port" / "cache" / "gather.cu").write_text(CACHE_PORT)
    (tmp_path / "port" / "sparse" / "convert.py").write_text(SPARSE_PORT)
    (tmp_path / "matrix.toml").write_text(SAMPLE_MATRIX)
    (tmp_path / "portq.toml").write_text(
        f'tree = "."\nmatrix = "matrix.toml"\nledger = ".portq/ledger.sqlite"\n[upstream.up]\npath = "{upstream}"\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scan(capsys, *arguments) -> dict:
    code = main(["scan", "base..tip", "--json", *arguments])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def verdicts(document) -> list:
    return [(e["entry"], e["sha"], e["rows"], e["symbols"], e["verdict"], e["justification"], e["decided_by"],
             e["evidence"]) for e in document["entries"]]


def latest(workspace):
    with open_ledger(workspace / ".portq" / "ledger.sqlite", create=False) as ledger:
        wave = ledger.waves()[-1]
        counts = {table: ledger.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                  for table in ("wave_entries", "verdict_events", "texts")}
        return wave, counts


def no_patches(patch):
    """Make reading any patch fail: what a rescan reads is then visible."""
    read: list[list[str]] = []

    def refuse(self, revisions, *more):
        raise AssertionError("the whole range was read again")

    def record(self, shas, spec):
        read.append(list(shas))
        return original(self, shas, spec)

    original = portq.upstream.history.Upstream.commits_of
    patch.setattr(portq.upstream.history.Upstream, "commits", refuse)
    patch.setattr(portq.upstream.history.Upstream, "commits_of", record)
    return read


def test_an_unchanged_rescan_reuses_every_decision_without_reading_a_patch(workspace, capsys, monkeypatch):
    first = scan(capsys)
    _, before = latest(workspace)
    read = no_patches(monkeypatch)
    again = scan(capsys)
    wave, after = latest(workspace)
    assert read == []
    assert again["wave"] == "PORTQ-2" and verdicts(again) == verdicts(first)
    assert (wave.status, wave.reuses_wave, json.loads(wave.redecided)) == ("complete", 1, [])
    assert after == before  # no entry rows, no events, no texts: the wave is one row


def test_fresh_decides_every_entry_again_and_stores_only_references(workspace, capsys):
    first = scan(capsys)
    _, before = latest(workspace)
    again = scan(capsys, "--fresh")
    wave, after = latest(workspace)
    n = len(SAMPLE_ENTRY_ORDER)
    assert verdicts(again) == verdicts(first) and wave.reuses_wave is None
    assert (after["wave_entries"], after["verdict_events"]) == (2 * n, 2 * n)
    assert after["texts"] == before["texts"]  # the same evidence, verdicts and symbol lists, referenced


def test_editing_one_ported_file_redecides_only_its_rows_entries(workspace, capsys, monkeypatch):
    sparse = owned_by(scan(capsys), "SPARSE")
    assert sparse and sparse != set(range(1, len(SAMPLE_ENTRY_ORDER) + 1))
    port = workspace / "port" / "sparse" / "convert.py"
    port.write_text(SPARSE_PORT.replace("# portq: ports", "# portq: not-carried") + "  # out of scope\n")
    with monkeypatch.context() as patch:
        read = no_patches(patch)
        rescan = scan(capsys)
    wave, _ = latest(workspace)
    assert set(json.loads(wave.redecided)) == sparse
    assert [len(shas) for shas in read] == [len(sparse)]  # those commits only (the rename among them)
    fresh = scan(capsys, "--fresh")
    assert verdicts(rescan) == verdicts(fresh)
    assert {e["entry"] for e in rescan["entries"] if e["justification"] == "not-carried"} <= sparse


def test_editing_a_caller_outside_the_rows_redecides_the_entries_of_the_port_it_calls(workspace, capsys):
    first = scan(capsys)
    (workspace / "engine.py").write_text("from port.sparse.convert import convert_index\n\n\n"
                                         "def run(a, b):\n    return convert_index(a, b)\n")
    rescan = scan(capsys)
    wave, _ = latest(workspace)
    ported_path = touching(first, "sparse_utils.py")
    assert ported_path and set(json.loads(wave.redecided)) == ported_path  # the entries that touch its path
    assert verdicts(rescan) == verdicts(scan(capsys, "--fresh"))


def test_a_decision_of_another_classifier_version_is_decided_again(workspace, capsys, monkeypatch):
    first = scan(capsys)
    monkeypatch.setattr(portq.classifier.decision_keys, "CLASSIFIER_VERSION", portq.classifier.decision_keys.CLASSIFIER_VERSION + 1)
    again = scan(capsys)
    wave, counts = latest(workspace)
    assert wave.reuses_wave is None and counts["verdict_events"] == 2 * len(SAMPLE_ENTRY_ORDER)
    assert verdicts(again) == verdicts(first)


def test_a_matrix_edit_decides_the_range_again(workspace, capsys):
    scan(capsys)
    (workspace / "matrix.toml").write_text(SAMPLE_MATRIX.replace('symbols  = ["concat_and_cache"]', "symbols  = []"))
    scan(capsys)
    wave, _ = latest(workspace)
    assert wave.reuses_wave is None


def test_a_tree_edited_during_a_scan_is_decided_and_recorded_as_it_was_at_the_start(workspace, capsys, monkeypatch):
    port = workspace / "port" / "sparse" / "convert.py"
    at_start = TreeIndex.build(workspace, None, ["port/cache/", "port/sparse/"]).key
    real_build = portq.pipeline.scan.build_classifier

    def edit_then_build(context):
        port.write_text("def convert_index(req, out):\n    return None\n")  # the anchor is gone
        return real_build(context)

    with monkeypatch.context() as patch:
        patch.setattr(portq.pipeline.scan, "build_classifier", edit_then_build)
        during = scan(capsys)
    wave, _ = latest(workspace)
    assert wave.tree_fingerprint == at_start[:16]
    port.write_text(SPARSE_PORT)  # the tree the scan started from, again
    again = scan(capsys)
    wave, _ = latest(workspace)
    assert (wave.reuses_wave, json.loads(wave.redecided)) == (1, [])  # recorded with the start tree's keys
    assert verdicts(during) == verdicts(scan(capsys, "--fresh")) == verdicts(again)


def test_a_review_sticks_across_a_reused_rescan_and_the_scan_stays_a_proposal(workspace, capsys):
    scan(capsys)
    assert main(["review", "1", "--verdict", "REAL_GAP", "--because", "read it", "--who", "ana"]) == 0
    capsys.readouterr()
    scan(capsys)
    wave, _ = latest(workspace)
    assert wave.reuses_wave == 1
    assert main(["show", "1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["verdict"], shown["source"]) == ("REAL_GAP", "review")
    assert shown["proposal"]["verdict"] != "REAL_GAP" and shown["proposal"]["wave"] == "PORTQ-2"


def test_a_partial_rescan_of_a_partial_rescan_reads_through_both(workspace, capsys):
    scan(capsys)
    (workspace / "port" / "sparse" / "convert.py").write_text(SPARSE_PORT + "\n# one more line\n")
    scan(capsys)
    (workspace / "port" / "cache" / "gather.cu").write_text(CACHE_PORT + "\n// one more line\n")
    third = scan(capsys)
    scan(capsys)  # unchanged: reuses the third wave's view
    wave, _ = latest(workspace)
    assert (wave.name, wave.reuses_wave, json.loads(wave.redecided)) == ("PORTQ-4", 3, [])
    assert main(["show", "1", "--json"]) == 0  # entry 1 is decided in wave 3 (both rows)
    assert json.loads(capsys.readouterr().out)["wave"] == "PORTQ-4"
    assert verdicts(third) == verdicts(scan(capsys, "--fresh"))



def test_a_wave_s_recorded_positions_are_those_its_entries_read_through_every_reused_wave(workspace, capsys):
    scan(capsys)
    (workspace / "port" / "sparse" / "convert.py").write_text(SPARSE_PORT + "\n# one more line\n")
    scan(capsys)  # decides the sparse row's entries, reuses the rest
    scan(capsys)  # decides nothing, reuses wave 2 (which reuses wave 1)
    with open_ledger(workspace / ".portq" / "ledger.sqlite", create=False) as ledger:
        waves = ledger.waves()
        assert [(w.reuses_wave, bool(json.loads(w.redecided or "[]"))) for w in waves] == \
               [(None, False), (1, True), (2, False)]
        for wave in waves:
            positions = [record.position for record in ledger.wave_entries(wave)]
            assert ledger.recorded_positions(wave) == set(positions) and len(positions) == wave.entry_count

def test_a_foreign_in_tree_index_cache_is_rebuilt_not_trusted(workspace):
    cache = workspace / "cache"
    built = TreeIndex.build(workspace, cache)
    (cached,) = cache.glob("tree-index-*.json")
    cached.write_text(json.dumps({"format": -1, "files": []}))
    again = TreeIndex.build(workspace, cache)
    assert [a.to_json() for a in again.anchors] == [a.to_json() for a in built.anchors] and again.anchors


def count_indexed(patch) -> list[str]:
    import portq.tree.tree_index

    indexed: list[str] = []
    real = portq.tree.tree_index.index_file

    def counting(source, path, anchors=True, **options):
        indexed.append(path)
        return real(source, path, anchors, **options)

    patch.setattr(portq.tree.tree_index, "index_file", counting)
    return indexed


def test_after_an_edit_only_the_edited_file_is_indexed_again(workspace, monkeypatch):
    cache = workspace / "cache"
    roots = ["port/cache/", "port/sparse/"]
    first = TreeIndex.build(workspace, cache, roots)
    (workspace / "port" / "sparse" / "convert.py").write_text(SPARSE_PORT + "\n# edited\n")
    with monkeypatch.context() as patch:
        indexed = count_indexed(patch)
        edited = TreeIndex.build(workspace, cache, roots)
    assert indexed == ["port/sparse/convert.py"]
    fresh = TreeIndex.build(workspace, None, roots)
    assert [r.to_json() for r in edited.files.values()] == [r.to_json() for r in fresh.files.values()]
    assert edited.key != first.key


def test_an_index_cached_by_other_extraction_code_is_not_read(workspace, monkeypatch):
    import portq.tree.tree_index

    cache = workspace / "cache"
    TreeIndex.build(workspace, cache)
    with monkeypatch.context() as patch:
        patch.setattr(portq.tree.tree_index, "INDEX_RULES", "other")
        indexed = count_indexed(patch)
        TreeIndex.build(workspace, cache)
    assert sorted(indexed) == sorted(TreeIndex.build(workspace, None).file_digests)


def test_a_redecided_entry_is_classified_with_the_renames_of_the_anchored_paths_it_touches(
        workspace, capsys, monkeypatch):
    first = scan(capsys)
    cache = owned_by(first, "CACHE")
    rename = SAMPLE_ENTRY_ORDER.index("rename") + 1
    assert rename not in cache and cache & touching(first, "sparse_utils.py")  # entry 1 touches the renamed file
    (workspace / "port" / "cache" / "gather.cu").write_text(CACHE_PORT + "\n// edited\n")
    with monkeypatch.context() as patch:
        read = no_patches(patch)
        rescan = scan(capsys)
    wave, _ = latest(workspace)
    assert set(json.loads(wave.redecided)) == cache
    shas = {e["sha"]: e["entry"] for e in first["entries"]}
    assert [{shas[sha] for sha in batch} for batch in read] == [cache | {rename}]
    assert verdicts(rescan) == verdicts(scan(capsys, "--fresh"))


def test_editing_what_one_row_tests_redecides_only_that_rows_entries(workspace, capsys):
    cache = owned_by(scan(capsys), "CACHE")
    (workspace / "matrix.toml").write_text(SAMPLE_MATRIX.replace('tests    = ["tests/cache/"]',
                                                                 'tests    = ["tests/cache/", "tests/more/"]'))
    scan(capsys)
    wave, _ = latest(workspace)
    assert set(json.loads(wave.redecided)) == cache


def test_a_decision_of_other_classifying_code_is_decided_again(workspace, capsys, monkeypatch):
    scan(capsys)
    monkeypatch.setattr(portq.classifier.decision_keys, "DECISION_RULES", "edited without a version bump")
    scan(capsys)
    wave, _ = latest(workspace)
    assert wave.reuses_wave is None


def test_a_rescan_after_an_edit_reads_the_upstream_signatures_the_cold_scan_stored(workspace, capsys, monkeypatch):
    cold = scan(capsys)
    port = workspace / "port" / "sparse" / "convert.py"
    port.write_text(SPARSE_PORT + "# edited\n")
    with monkeypatch.context() as patch:
        patch.setattr(portq.classifier.verdicts, "signature_of", lambda *a, **k: pytest.fail("an upstream signature computed again"))
        rescan = scan(capsys)
    wave, _ = latest(workspace)
    assert json.loads(wave.redecided)  # entries were decided again, from the stored signatures
    assert verdicts(rescan) == verdicts(scan(capsys, "--fresh")) == verdicts(cold)


@pytest.mark.parametrize("warm_up", ["none", "all of it"])
def test_what_a_cold_scan_finds_ahead_while_waiting_for_git_changes_no_verdict_and_no_key(
        workspace, capsys, monkeypatch, warm_up):
    def keys_of_latest():
        with open_ledger(workspace / ".portq" / "ledger.sqlite", create=False) as ledger:
            decisions = ledger.decisions(ledger.waves()[-1])
            return {position: decision.key for position, decision in decisions.items()}

    usual = scan(capsys)
    usual_keys = keys_of_latest()
    real = portq.pipeline.scan._keys_warmed_up

    def taken_first(made, *arguments):
        steps = list(real(made, *arguments)) if warm_up == "all of it" else []
        assert len(steps) == (1 + sum(len(a) for a in made[0]._by_path.values()) if made else 0)
        return iter(())

    monkeypatch.setattr(portq.pipeline.scan, "_keys_warmed_up", taken_first)
    other = scan(capsys, "--fresh")
    assert verdicts(other) == verdicts(usual) and keys_of_latest() == usual_keys


def test_a_cold_scan_classifies_from_the_trees_mapping_parsed_reading_and_parsing_no_anchored_blob_again(
        workspace, capsys, monkeypatch):
    import portq.language.symbols

    anchored = {"csrc/cache_kernels.cu", "vllm/sparse_utils.py"}
    parsed_by_classifier, read = [], []
    real_table, real_commits = portq.language.symbols.symbol_table, portq.upstream.history.Upstream.read_blob
    monkeypatch.setattr(portq.language.symbols, "symbol_table", lambda source, path, previous=None: (
        parsed_by_classifier.append(path), real_table(source, path, previous))[1])
    monkeypatch.setattr(portq.upstream.history.Upstream, "read_blob", lambda self, sha: (read.append(sha),
                                                                                real_commits(self, sha))[1])
    handed = scan(capsys)
    assert handed["entries"] and not anchored & set(parsed_by_classifier) and not read
    monkeypatch.setattr(portq.language.symbols.SymbolTableCache, "adopts", lambda self, path: False)
    parsed_by_classifier.clear()
    parsed_itself = scan(capsys, "--fresh")
    assert anchored & set(parsed_by_classifier)  # without the hand-over the classifier parses them itself
    assert verdicts(parsed_itself) == verdicts(handed)
