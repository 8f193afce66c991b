"""Ownership and enclosing-symbol mapping over the sample upstream."""
from __future__ import annotations

import pytest

from portq.classifier.mapping import ChangeMapper
from portq.core.model import Commit, FileChange
from portq.language.symbols import MAX_PARSE_BYTES
from portq.tree.matrix import Matrix
from portq.upstream.history import Upstream
from tests.portq.fixtures import SAMPLE_ENTRY_ORDER, SAMPLE_MATRIX, build_sample_upstream


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    path = tmp_path_factory.mktemp("mapping") / "up"
    build_sample_upstream(path)
    with Upstream(path, "up") as upstream:
        mapper = ChangeMapper(Matrix.parse(SAMPLE_MATRIX), "up", upstream.read_blob)
        revisions = upstream.resolve_range("base..tip")
        mapped = [mapper.map_commit(n, c) for n, c in enumerate(upstream.commits(revisions), 1)]
    return dict(zip(SAMPLE_ENTRY_ORDER, mapped))


def symbols_of(entry):
    return [(s.path, s.name, s.change) for s in entry.symbols]


def test_positions_follow_the_range(entries):
    assert [e.position for e in entries.values()] == list(range(1, len(SAMPLE_ENTRY_ORDER) + 1))


def test_two_row_commit_lists_every_half(entries):
    entry = entries["two-rows"]
    assert set(entry.rows) == {"CACHE", "SPARSE"}
    assert symbols_of(entry) == [
        ("csrc/cache_kernels.cu", "gather_cache_kernel", "modified"),
        ("vllm/sparse_utils.py", "_convert_kernel", "modified"),
        ("vllm/sparse_utils.py", "convert_index", "modified"),
    ]


def test_cuda_kernel_is_mapped_on_old_and_new_side(entries):
    kernel = entries["two-rows"].symbols[0]
    assert (kernel.kind, kernel.qualified_name) == ("cuda_kernel", "vllm::gather_cache_kernel")
    assert kernel.old_lines == (5, 10) and kernel.new_lines == (5, 12)
    assert kernel.hunk_headers == ("@@ -6,7 +6,9 @@ template <typename scalar_t>",)


def test_triton_kernel_kind_is_recognised(entries):
    assert entries["two-rows"].symbols[1].kind == "triton_kernel"


def test_unowned_commit_has_no_rows_and_lists_its_paths(entries):
    entry = entries["unrelated"]
    assert (entry.rows, entry.symbols, entry.unowned_paths) == ((), [], ("vllm/other.py",))


def test_merge_maps_what_it_brings_against_the_first_parent(entries):
    assert symbols_of(entries["merge"]) == [("vllm/sparse_utils.py", "new_helper", "added")]
    assert entries["merge"].symbols[0].old_lines is None


def test_renamed_file_keeps_its_old_path_and_is_claimed(entries):
    symbol = entries["rename"].symbols[0]
    assert (symbol.path, symbol.old_path, symbol.name, symbol.rows) == (
        "vllm/v1/sparse_utils.py", "vllm/sparse_utils.py", "convert_index", ("SPARSE",)
    )


def test_binary_file_under_an_owned_directory_is_a_lines_fallback(entries):
    symbol = entries["binary"].symbols[0]
    assert (symbol.name, symbol.kind, symbol.rows) == ("<lines>", "lines", ("CACHE",))
    assert symbol.fallback == "binary file: recorded, not parsed"


def test_empty_commit_maps_to_nothing(entries):
    entry = entries["empty"]
    assert (entry.rows, entry.symbols, entry.unowned_paths) == ((), [], ())


def test_file_owned_by_two_rows_names_the_symbol_claimant_first(entries):
    entry = entries["both-owners"]
    assert entry.rows == ("SPARSE", "CACHE")
    assert entry.symbols[0].name == "gather_cache" and entry.symbols[0].rows == ("SPARSE", "CACHE")


def test_excluded_path_is_not_claimed_even_by_symbol(entries):
    entry = entries["excluded"]
    assert (entry.rows, entry.unowned_paths) == ((), ("csrc/test_cache.cu",))


def test_lines_outside_definitions_are_toplevel(entries):
    symbol = entries["toplevel"].symbols[0]
    assert (symbol.name, symbol.kind, symbol.new_lines) == ("<toplevel>", "toplevel", (2, 2))


def test_removed_function_is_mapped_on_the_old_side_only(entries):
    assert symbols_of(entries["removal"]) == [("csrc/cache_kernels.cu", "concat_and_cache", "removed")]
    assert entries["removal"].symbols[0].new_lines is None


def test_op_schema_in_binding_file_is_a_symbol(entries):
    symbol = entries["schema"].symbols[0]
    assert (symbol.name, symbol.kind, symbol.rows) == ("gather_cache", "op_schema", ("SPARSE", "CACHE"))


SYMBOL_ONLY_MATRIX = """
[[row]]
id = "ONLY"
upstream = "up"
symbols = ["wanted"]
"""


def fake_change(path, old, new, patch):
    blobs = {"o": old, "n": new}
    return FileChange("modified", path, path, old_blob="o", new_blob="n", patch=patch), blobs.__getitem__


PATCH = "diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -2 +2 @@\n-    return 1\n+    return 2\n"


def test_symbol_claim_reaches_a_file_no_path_owns():
    change, read = fake_change("any/where.py", b"def wanted():\n    return 1\n", b"def wanted():\n    return 2\n",
                               PATCH.format(p="any/where.py"))
    mapper = ChangeMapper(Matrix.parse(SYMBOL_ONLY_MATRIX), "up", read)
    entry = mapper.map_commit(1, Commit("s", (), "t", "t", "a", "d", changes=[change]))
    assert entry.rows == ("ONLY",) and [s.name for s in entry.symbols] == ["wanted"]


def test_file_mentioning_a_claimed_name_outside_the_touched_definition_stays_unowned():
    old = b"def other():\n    return 1\n\n\ndef wanted():\n    pass\n"
    new = old.replace(b"return 1", b"return 2")
    change, read = fake_change("any/where.py", old, new, PATCH.format(p="any/where.py"))
    mapper = ChangeMapper(Matrix.parse(SYMBOL_ONLY_MATRIX), "up", read)
    entry = mapper.map_commit(1, Commit("s", (), "t", "t", "a", "d", changes=[change]))
    assert (entry.rows, entry.unowned_paths) == ((), ("any/where.py",))


def test_file_over_the_parse_bound_falls_back_to_line_ranges():
    matrix = Matrix.parse('[[row]]\nid = "R"\nupstream = "up"\npaths = ["**/*.py"]\n')
    big = b"def wanted():\n    return 1\n" + b"#" * MAX_PARSE_BYTES
    change, read = fake_change("x.py", big, big.replace(b"return 1", b"return 2"), PATCH.format(p="x.py"))
    entry = ChangeMapper(matrix, "up", read).map_commit(1, Commit("s", (), "t", "t", "a", "d", changes=[change]))
    symbol = entry.symbols[0]
    assert (symbol.name, symbol.old_lines, symbol.new_lines) == ("<lines>", (2, 2), (2, 2))
    assert "parse bound" in symbol.fallback


def test_unparseable_owned_file_is_a_lines_fallback_with_reason():
    matrix = Matrix.parse('[[row]]\nid = "R"\nupstream = "up"\npaths = ["**/*.py"]\n')
    change, read = fake_change("x.py", b"(((\n)))\n", b"(((\n))))\n", PATCH.format(p="x.py"))
    entry = ChangeMapper(matrix, "up", read).map_commit(1, Commit("s", (), "t", "t", "a", "d", changes=[change]))
    symbol = entry.symbols[0]
    assert (symbol.name, symbol.kind, symbol.rows) == ("<lines>", "lines", ("R",))
    assert "syntax errors" in symbol.fallback


# --- symbol claims: cheap, and never missed ------------------------------------------------

def unified_patch(path: str, old: bytes, new: bytes) -> str:
    """A git-style diff of one file (three lines of context, no section in the hunk headers)."""
    import difflib

    lines = difflib.unified_diff(old.decode().splitlines(True), new.decode().splitlines(True),
                                 f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def map_one(matrix_text, change, read, tables=None):
    mapper = ChangeMapper(Matrix.parse(matrix_text), "up", read, tables)
    return mapper.map_commit(1, Commit("s", (), "t", "t", "a", "d", changes=[change]))


def test_qualified_claim_reaches_a_definition_its_diff_and_blob_never_spell_out():
    # "vllm::wanted" appears nowhere in the file: only "namespace vllm {" and "void wanted()".
    body = "".join(f"  int v{i} = {i};\n" for i in range(12))
    old = f"namespace vllm {{\nvoid wanted() {{\n{body}}}\n}}  // namespace vllm\n".encode()
    new = old.replace(b"int v6 = 6;", b"int v6 = 60;")
    patch = unified_patch("csrc/any.cu", old, new)
    assert "wanted" not in patch and "vllm" not in patch
    change, read = fake_change("csrc/any.cu", old, new, patch)
    entry = map_one('[[row]]\nid = "Q"\nupstream = "up"\nsymbols = ["vllm::wanted"]\n', change, read)
    assert entry.rows == ("Q",) and [s.qualified_name for s in entry.symbols] == ["vllm::wanted"]


CLAIMED_FILE = b"".join([
    b"import triton\n\n\n",
    b"def before(x):\n" + b"".join(b"    x = x + %d\n" % i for i in range(8)) + b"    return x\n\n\n",
    b"@triton.jit\ndef wanted(x):\n" + b"".join(b"    x = x * %d\n" % i for i in range(10)) + b"    return x\n\n\n",
    b"def after(x):\n" + b"".join(b"    x = x - %d\n" % i for i in range(8)) + b"    return x\n",
])


def edits_of_every_line():
    """(line, old, new): each non-blank line of CLAIMED_FILE edited in turn."""
    lines = CLAIMED_FILE.split(b"\n")
    for index, text in enumerate(lines):
        if text.strip():
            edited = lines[:index] + [text + b"  # edited"] + lines[index + 1:]
            yield index + 1, CLAIMED_FILE, b"\n".join(edited)


def test_a_symbol_claim_is_decided_alike_from_blobs_and_from_stored_definitions(tmp_path):
    from portq.tree.symbol_cache import DefinitionCache

    matrix = '[[row]]\nid = "ONLY"\nupstream = "up"\nsymbols = ["wanted"]\n'
    wanted_lines = range(CLAIMED_FILE.split(b"\n").index(b"@triton.jit") + 1,
                         CLAIMED_FILE.split(b"\n").index(b"def after(x):") - 1)
    diff_silent = 0
    for line, old, new in edits_of_every_line():
        patch = unified_patch("pkg/mod.py", old, new)
        diff_silent += "wanted" not in patch
        change, read = fake_change("pkg/mod.py", old, new, patch)
        cold = map_one(matrix, change, read)  # reads and searches the blobs, parses on a hit
        with DefinitionCache(tmp_path / f"{line}.sqlite") as store:
            store.get("o", "pkg/mod.py", lambda: old)
            store.get("n", "pkg/mod.py", lambda: new)

        def no_reads(sha):
            raise AssertionError(f"blob {sha} read although its definitions are stored")

        change, _ = fake_change("pkg/mod.py", old, new, patch)
        with DefinitionCache(tmp_path / f"{line}.sqlite") as store:
            warm = map_one(matrix, change, no_reads, store)
        expected = ("ONLY",) if line in wanted_lines else ()
        assert cold.rows == warm.rows == expected, line
        assert [s.name for s in cold.symbols] == [s.name for s in warm.symbols] == (["wanted"] if expected else [])
    assert diff_silent > 5  # most edits inside wanted() do not show its name in the diff


def chain_of_edits(path: str, versions: list[bytes]) -> tuple[list[Commit], dict[str, bytes]]:
    """One commit per version after the first, each editing ``path``; and the blobs by SHA."""
    blobs = {f"v{i}": data for i, data in enumerate(versions)}
    commits = [Commit(f"c{i}", (), "t", "t", "a", "d", changes=[FileChange(
        "modified", path, path, old_blob=f"v{i - 1}", new_blob=f"v{i}",
        patch=unified_patch(path, versions[i - 1], versions[i]))]) for i in range(1, len(versions))]
    return commits, blobs


@pytest.mark.parametrize("mentioned", [False, True])
def test_a_chain_of_edits_whose_diffs_name_no_claimed_symbol_is_searched_through_one_blob(mentioned):
    base = b"def other(x):\n" + b"".join(b"    x = x + %d\n" % i for i in range(8)) + b"    return x\n"
    if mentioned:  # the file defines a claimed symbol, away from every edit
        base += b"\n\ndef wanted():\n    pass\n"
    versions = [base.replace(b"x + 4", b"x + %d" % (40 + n)) for n in range(6)]
    commits, blobs = chain_of_edits("pkg/mod.py", versions)
    added = FileChange("added", None, "pkg/new.py", new_blob="a", patch=unified_patch("pkg/new.py", b"", b"x = 1\n"))
    commits[2].changes.append(added)
    searched = []

    def read_blobs(shas):
        searched.append(sorted(shas))
        return {sha: {**blobs, "a": b"x = 1\n"}[sha] for sha in shas}

    mapper = ChangeMapper(Matrix.parse(SYMBOL_ONLY_MATRIX), "up", blobs.__getitem__, None, read_blobs)
    entries = list(mapper.map_commits(commits))
    assert all(entry.rows == () for entry in entries)
    assert len(searched[0]) == 1  # one blob answers for the whole chain; the added file's diff answers for it
    assert len(searched) == (2 if mentioned else 1)  # a hit: the blobs are then read to be parsed



def test_the_blobs_of_changes_a_path_claims_come_in_the_name_search_s_round_trip():
    matrix = SYMBOL_ONLY_MATRIX + 'paths = ["pkg/owned.py"]\n'
    other = b"def other(x):\n    return x + 1\n"
    owned = b"def kernel(x):\n    return x\n"
    blobs = {"o1": other, "o2": other.replace(b"+ 1", b"+ 2"), "k1": owned, "k2": owned.replace(b"x\n", b"x * 2\n")}
    commit = Commit("c", (), "t", "t", "a", "d", changes=[
        FileChange("modified", "pkg/mod.py", "pkg/mod.py", old_blob="o1", new_blob="o2",
                   patch=unified_patch("pkg/mod.py", blobs["o1"], blobs["o2"])),
        FileChange("modified", "pkg/owned.py", "pkg/owned.py", old_blob="k1", new_blob="k2",
                   patch=unified_patch("pkg/owned.py", blobs["k1"], blobs["k2"]))])
    reads = []

    def read_blobs(shas):
        reads.append(sorted(shas))
        return {sha: blobs[sha] for sha in shas}

    mapper = ChangeMapper(Matrix.parse(matrix), "up", lambda sha: pytest.fail(f"{sha} read alone"), None, read_blobs)
    [entry] = mapper.map_commits([commit])
    assert reads == [["k1", "k2", "o2"]]  # one round trip: mod.py's name search, owned.py's two versions
    assert entry.rows == ("ONLY",) and [s.name for s in entry.symbols] == ["kernel"] and entry.unowned_paths == ("pkg/mod.py",)

def test_a_second_mapping_parses_nothing_and_maps_alike(tmp_path):
    from portq.tree.symbol_cache import DefinitionCache

    path = tmp_path / "up"
    build_sample_upstream(path)
    results, reads, stores = [], [], []
    with Upstream(path, "up") as upstream:
        revisions = upstream.resolve_range("base..tip")
        for _ in range(2):
            counted: list[str] = []

            def read_blobs(shas, counted=counted):
                counted.extend(shas)
                return upstream.read_blobs(shas)

            with DefinitionCache(tmp_path / "definitions.sqlite") as store:
                mapper = ChangeMapper(Matrix.parse(SAMPLE_MATRIX), "up", upstream.read_blob, store, read_blobs)
                results.append(list(mapper.map_commits(upstream.commits(revisions))))
            reads.append(counted)
            stores.append(store)
    assert reads[0] and set(reads[1]) < set(reads[0])  # the second reads only for the name search
    assert stores[1].parsed == 0 and stores[1].recalled > 0
    assert [(e.rows, e.symbols, e.unowned_paths) for e in results[0]] == \
           [(e.rows, e.symbols, e.unowned_paths) for e in results[1]]


def test_a_scan_keeps_trees_only_for_live_paths_and_parses_a_renamed_file_from_its_old_tree(monkeypatch):
    from portq.tree.symbol_cache import DefinitionCache
    import portq.tree.symbol_cache as symbol_cache

    parse, seeded = symbol_cache._parsed, []

    def recording(source, path, language, previous):
        seeded.append((path, previous is not None))
        return parse(source, path, language, previous)

    monkeypatch.setattr(symbol_cache, "_parsed", recording)
    versions = [b"def f(x):\n    return %d\n" % n for n in range(4)]
    blobs = {f"v{n}": data for n, data in enumerate(versions)}

    def change(status, old_path, new_path, old, new):
        return FileChange(status, old_path, new_path, old_blob=old, new_blob=new, patch=unified_patch(
            new_path or old_path, blobs[old] if old else b"", blobs[new] if new else b""))

    commits = [Commit(f"c{n}", (), "t", "t", "a", "d", changes=changes) for n, changes in enumerate([
        [change("modified", "pkg/a.py", "pkg/a.py", "v0", "v1"), change("modified", "pkg/gone.py", "pkg/gone.py",
                                                                        "v0", "v2")],
        [change("renamed", "pkg/a.py", "pkg/b.py", "v1", "v3")],
        [change("deleted", "pkg/gone.py", None, "v2", None)],
    ])]
    tables = DefinitionCache()
    matrix = '[[row]]\nid = "ALL"\nupstream = "up"\npaths = ["pkg/**"]\n'
    entries = list(ChangeMapper(Matrix.parse(matrix), "up", blobs.__getitem__, tables).map_commits(commits))
    assert [entry.rows for entry in entries] == [("ALL",)] * 3
    assert ("pkg/b.py", True) in seeded  # the renamed file's new blob reused the tree of pkg/a.py
    assert tables.live_paths == ["pkg/b.py"]  # pkg/a.py renamed away, pkg/gone.py deleted


# --- ownership decided once: files no row owns but a port names -----------------------------


def test_a_file_no_row_owns_is_mapped_when_an_anchor_names_it_or_a_name_it_had():
    old = b"def other():\n    return 1\n"
    change, read = fake_change("any/where.py", old, old.replace(b"return 1", b"return 2"), PATCH.format(p="any/where.py"))
    commit = Commit("s", (), "t", "t", "a", "d", changes=[change])
    unanchored = ChangeMapper(Matrix.parse(SYMBOL_ONLY_MATRIX), "up", read, anchored=lambda paths: False)
    assert unanchored.map_commit(1, commit).unowned_paths == ("any/where.py",)
    named_later = ChangeMapper(Matrix.parse(SYMBOL_ONLY_MATRIX), "up", read,
                               anchored=lambda paths: "moved/where.py" in paths,
                               aliases={"any/where.py": {"moved/where.py"}})
    entry = named_later.map_commit(1, commit)
    assert entry.unowned_paths == () and [(s.name, s.rows) for s in entry.symbols] == [("other", ())]


def test_an_owned_change_that_touches_no_definition_is_owned_without_symbols():
    matrix = Matrix.parse('[[row]]\nid = "R"\nupstream = "up"\npaths = ["**/*.py"]\n')
    change = FileChange("renamed", "a/x.py", "b/x.py", old_blob="1" * 40, new_blob="1" * 40,
                        patch="diff --git a/a/x.py b/b/x.py\nsimilarity index 100%\nrename from a/x.py\nrename to b/x.py\n")
    entry = ChangeMapper(matrix, "up", lambda sha: b"").map_commit(1, Commit("s", (), "t", "t", "a", "d", changes=[change]))
    assert (entry.rows, entry.symbols, entry.owned_changes) == (("R",), [], [change])
