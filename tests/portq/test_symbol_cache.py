"""The persistent definition cache: what it keeps, for whom, and when it steps aside."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from portq.language.symbols import symbol_table
from portq.tree.symbol_cache import DefinitionCache
import portq.tree.symbol_cache as symbol_cache

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE = b"class Box:\n    def open(self):\n        return 1\n\n\ndef helper(x):\n    return x\n"


def summary(table):
    return table.fallback, [(d.name, d.qualified_name, d.kind, d.language, d.start_line, d.end_line)
                            for d in table.definitions]


def never(sha="blob"):
    raise AssertionError(f"{sha} was loaded although it is stored")


def test_a_second_process_reads_definitions_instead_of_parsing(tmp_path):
    with DefinitionCache(tmp_path / "d.sqlite") as first:
        parsed = first.get("b1", "pkg/box.py", lambda: SOURCE)
    with DefinitionCache(tmp_path / "d.sqlite") as second:
        stored = second.get("b1", "pkg/box.py", never)
        assert (second.parsed, second.recalled) == (0, 1)
    assert summary(stored) == summary(parsed) == summary(symbol_table(SOURCE, "pkg/box.py"))


def test_a_new_store_is_not_asked_for_lists_it_cannot_hold_and_one_with_lists_is(tmp_path):
    def selects(cache, keys):
        statements = []
        cache._db.set_trace_callback(statements.append)
        cache.recall(keys)
        cache._db.set_trace_callback(None)
        return [s for s in statements if s.startswith("SELECT")]

    with DefinitionCache(tmp_path / "d.sqlite") as first:
        assert selects(first, [("b1", "pkg/box.py"), ("b2", "pkg/box.py")]) == []
        first.get("b1", "pkg/box.py", lambda: SOURCE)
    with DefinitionCache(tmp_path / "d.sqlite") as second:
        assert len(selects(second, [("b1", "pkg/box.py"), ("b2", "pkg/box.py")])) == 1
        assert second.has("b1", "pkg/box.py") and not second.has("b2", "pkg/box.py")


def test_stored_tables_hold_no_tree_sitter_objects(tmp_path):
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        table = cache.get("b1", "pkg/box.py", lambda: SOURCE)
    assert table.tree is None and table.source == b"" and all(d.node is None for d in table.definitions)


def test_one_blob_has_one_entry_per_language(tmp_path):
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        cache.get("b1", "a/one.py", lambda: SOURCE)
        cache.get("b1", "b/two.py", never)  # same blob elsewhere: same definitions
        cpp = cache.get("b1", "c/three.cu", lambda: b"void f() {}\n")
    assert [d.language for d in cpp.definitions] == ["cpp"]


def test_other_extraction_rules_do_not_read_stored_lists(tmp_path, monkeypatch):
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        cache.get("b1", "pkg/box.py", lambda: SOURCE)
    monkeypatch.setattr(symbol_cache, "RULES", symbol_cache.RULES + "-changed")
    loads = []
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        cache.get("b1", "pkg/box.py", lambda: loads.append(1) or SOURCE)
    assert loads == [1]


def test_a_write_under_new_rules_drops_the_lists_of_old_ones(tmp_path, monkeypatch):
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        cache.get("old", "pkg/box.py", lambda: SOURCE)
    monkeypatch.setattr(symbol_cache, "RULES", symbol_cache.RULES + "-changed")
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        cache.get("new", "pkg/box.py", lambda: SOURCE)
    rows = sqlite3.connect(tmp_path / "d.sqlite").execute("SELECT blob, rules FROM definitions").fetchall()
    assert rows == [("new", symbol_cache.RULES)]


def test_rules_name_the_portq_version_and_the_extraction_code():
    from portq import __version__

    version, _, digest = symbol_cache.RULES.partition("+")
    assert version == __version__ and len(digest) == 12


def test_a_fallback_is_stored_with_its_reason(tmp_path, monkeypatch):
    import portq.language.symbols

    monkeypatch.setattr(portq.language.symbols, "MAX_PARSE_BYTES", 10)
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        cache.get("big", "pkg/big.py", lambda: SOURCE)
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        table = cache.get("big", "pkg/big.py", never)
    assert table.definitions == [] and "parse bound" in table.fallback


def test_recall_reads_many_tables_in_one_go_and_remembers_misses(tmp_path):
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        for number in range(3):
            cache.get(f"b{number}", "m.py", lambda: SOURCE)
    with DefinitionCache(tmp_path / "d.sqlite") as cache:
        cache.recall([("b0", "m.py"), ("b1", "m.py"), ("b2", "m.py"), ("missing", "m.py"), ("b0", "notes.txt")])
        assert all(cache.has(f"b{n}", "m.py") for n in range(3)) and not cache.has("missing", "m.py")
        assert cache.recalled == 3
        cache.get("missing", "m.py", lambda: SOURCE)  # asked once already: parsed without another query
        assert cache.parsed == 1


def _foreign_store(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE definitions (blob TEXT, what TEXT)")
    db.execute("INSERT INTO definitions VALUES ('b1', 'not ours')")
    db.commit()
    db.close()


@pytest.mark.parametrize("make", [
    lambda path: path.write_bytes(b"this is not a database, only text" * 40),
    lambda path: path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200),
    _foreign_store,
], ids=["text", "damaged", "foreign-table"])
def test_an_unusable_cache_file_is_rebuilt_never_read(tmp_path, make):
    path = tmp_path / "d.sqlite"
    make(path)
    with DefinitionCache(path) as cache:
        table = cache.get("b1", "pkg/box.py", lambda: SOURCE)
        assert cache.persistent and cache.parsed == 1 and "d.sqlite" in cache.replaced
    assert [d.name for d in table.definitions] == ["Box", "open", "helper"]
    with DefinitionCache(path) as again:  # the rebuilt store serves the next scan
        again.get("b1", "pkg/box.py", lambda: pytest.fail("parsed again"))
        assert (again.recalled, again.replaced) == (1, None)


def test_a_cache_in_a_folder_that_cannot_be_made_is_set_aside(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    with DefinitionCache(blocker / "cache" / "d.sqlite") as cache:
        assert [d.name for d in cache.get("b1", "x.py", lambda: SOURCE).definitions] == ["Box", "open", "helper"]
        assert not cache.persistent and cache.problem


def test_memory_only_cache_never_touches_disk(tmp_path):
    cache = DefinitionCache()
    cache.get("b1", "x.py", lambda: SOURCE)
    cache.close()
    assert not cache.persistent and cache.problem is None


def parses_seen(monkeypatch) -> list[tuple[str, bytes | None]]:
    """(path, the source of the previous version handed to it) of each parse the cache makes."""
    seen = []
    parse = symbol_cache._parsed

    def recording(source, path, language, previous):
        seen.append((path, previous.source if previous is not None else None))
        return parse(source, path, language, previous)

    monkeypatch.setattr(symbol_cache, "_parsed", recording)
    return seen


NEXT = SOURCE.replace(b"return x", b"return x + 1")


def test_the_next_version_of_a_file_is_parsed_from_the_tree_kept_for_its_path(monkeypatch):
    seen = parses_seen(monkeypatch)
    cache = DefinitionCache()
    cache.get("v1", "pkg/box.py", lambda: SOURCE)
    cache.get("other", "pkg/other.py", lambda: NEXT)
    table = cache.get("v2", "pkg/box.py", lambda: NEXT)
    assert seen == [("pkg/box.py", None), ("pkg/other.py", None), ("pkg/box.py", SOURCE)]
    assert summary(table) == summary(symbol_table(NEXT, "pkg/box.py"))
    assert table.tree is None and cache.live_paths == ["pkg/other.py", "pkg/box.py"]


def test_a_renamed_file_is_parsed_from_its_old_path_tree_which_moves_to_the_new_path(monkeypatch):
    seen = parses_seen(monkeypatch)
    cache = DefinitionCache()
    cache.get("v1", "pkg/box.py", lambda: SOURCE)
    cache.get("v2", "pkg/moved.py", lambda: NEXT, "pkg/box.py")
    assert seen[-1] == ("pkg/moved.py", SOURCE) and cache.live_paths == ["pkg/moved.py"]


def test_forget_drops_the_tree_of_a_deleted_path():
    cache = DefinitionCache()
    cache.get("v1", "pkg/box.py", lambda: SOURCE)
    cache.get("c1", "csrc/k.cu", lambda: b"void f() {}\n")
    cache.forget("pkg/box.py")
    cache.forget("notes.txt")  # no grammar, no tree: nothing to drop
    assert cache.live_paths == ["csrc/k.cu"]


def test_kept_trees_stay_within_the_source_byte_bound_least_recent_dropped_first(monkeypatch):
    monkeypatch.setattr(symbol_cache, "LIVE_SOURCE_BYTES", len(SOURCE) + len(NEXT))
    cache = DefinitionCache()
    for number in range(4):
        cache.get(f"b{number}", f"pkg/m{number}.py", lambda: SOURCE)
    cache.get("b0-next", "pkg/m2.py", lambda: NEXT)  # m2 becomes the most recent
    assert cache.live_paths == ["pkg/m3.py", "pkg/m2.py"]
    assert cache._live_bytes == len(SOURCE) + len(NEXT)


def test_a_file_without_a_tree_keeps_none(monkeypatch):
    import portq.language.symbols

    monkeypatch.setattr(portq.language.symbols, "MAX_PARSE_BYTES", 10)
    cache = DefinitionCache()
    cache.get("big", "pkg/big.py", lambda: SOURCE)
    assert cache.live_paths == []


WRITER = """
import sys
from portq.tree.symbol_cache import DefinitionCache
import portq.tree.symbol_cache
portq.tree.symbol_cache.WRITE_BATCH = 7  # many small transactions, so the two writers interleave
with DefinitionCache(sys.argv[1]) as cache:
    for n in range(200):
        # half the blobs are shared with the other writer, half are its own
        blob = f"shared{n}" if n % 2 else f"own{sys.argv[2]}-{n}"
        cache.get(blob, "m.py", lambda n=n: f"def f{n}():\\n    return {n}\\n".encode())
"""


def test_two_scans_filling_one_cache_at_once_both_finish_and_store_each_blob_once(tmp_path):
    path = tmp_path / "d.sqlite"
    environment = {"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"}
    writers = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(path), str(i)],
                                env=environment, stderr=subprocess.PIPE, text=True) for i in range(2)]
    errors = [writer.communicate(timeout=120)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], errors
    db = sqlite3.connect(path)
    blobs = [row[0] for row in db.execute("SELECT blob FROM definitions")]
    assert len(blobs) == len(set(blobs)) == 100 + 2 * 100


def _definitions(table):
    return [(d.name, d.qualified_name, d.kind, d.language, d.start_line, d.end_line) for d in table.definitions], \
        table.fallback


_BLOCKS = {  # whole top-level definitions, valid wherever a top-level definition starts
    "cpp": ["void added_{n}(int x) {{ return; }}\n\n", "struct S{n} {{\n  int f() const {{ return 1; }}\n}};\n\n",
            "namespace extra_{n} {{\ntemplate <typename T>\n__global__ void k{n}(T* p) {{ p[0] = 0; }}\n}}\n\n",
            "TORCH_LIBRARY_FRAGMENT(x{n}, ops) {{\n  ops.def(\"op_{n}(Tensor x) -> ()\");\n}}\n\n"],
    "python": ["def added_{n}(x):\n    return {n}\n\n\n", "class K{n}:\n    def m(self):\n        pass\n\n\n",
               "@triton.jit\ndef _k{n}(x_ptr):\n    pass\n\n\n", "if X{n}:\n    def f{n}():\n        pass\n\n\n"],
}
_STARTS = {"cpp": ("void ", "template", "struct ", "namespace ", "__global__", "static "),
           "python": ("def ", "class ", "@")}
_COMMENT = {"cpp": " // note {n}", "python": "  # note {n}"}


@pytest.mark.parametrize("path, language", [
    ("examples/upstream/vllm/000-base/tree/csrc/libtorch_stable/cache_kernels.cu", "cpp"),
    ("kernels/mla_prefix/gather_kv_b_proj.py", "python"),
])
def test_versions_walked_in_order_get_the_definitions_of_fresh_parses(path, language, monkeypatch):
    """Random commits to a real file (new definitions, comments, renamed calls, lines
    removed, now and then a syntax error the next commit repairs): every version's
    definitions are a fresh parse's, and most root children are not walked again."""
    import random

    walked = []
    walk = symbol_cache.symbols.definitions_of_child
    monkeypatch.setattr(symbol_cache.symbols, "definitions_of_child",
                        lambda child, *rest: (walked.append(child.type), walk(child, *rest))[1])
    root = Path(__file__).resolve().parents[2]
    lines = (root / path).read_text().splitlines(keepends=True)
    generator = random.Random(path)
    cache = DefinitionCache()
    children, broken = 0, None
    for version in range(80):
        if broken is not None:
            del lines[broken]  # the next commit repairs the syntax error
            broken = None
        for _ in range(generator.randint(1, 3)):
            action = generator.random()
            starts = [i for i, line in enumerate(lines)
                      if line.startswith(_STARTS[language]) and (i == 0 or not lines[i - 1].strip())]
            if action < 0.3 and starts:
                lines.insert(generator.choice(starts), generator.choice(_BLOCKS[language]).format(n=version))
            elif action < 0.6:
                at = generator.randrange(len(lines))
                if lines[at].strip() and not lines[at].rstrip().endswith(("\\", '"""', ",")) and '"' not in lines[at]:
                    lines[at] = lines[at].rstrip("\n") + _COMMENT[language].format(n=version) + "\n"
            elif action < 0.8:
                at = generator.randrange(len(lines))
                lines[at] = lines[at].replace("int64_t", "int32_t").replace("block_size", "block_sz")
            else:
                blank = [i for i, line in enumerate(lines) if not line.strip()
                         and not lines[min(i + 1, len(lines) - 1)].startswith(_STARTS[language])]
                if blank:
                    del lines[generator.choice(blank)]
        if version % 20 == 10:
            broken = len(lines) - generator.randrange(1, 8)  # near the end: the rest of the file parses alike
            lines.insert(broken, "def (\n" if language == "python" else "void (\n")
        source = "".join(lines).encode()
        table = cache.get(f"{version:040x}", path, lambda: source)
        assert _definitions(table) == _definitions(symbol_table(source, path)), f"version {version}"
        children += len(cache._live[(path, language)].children)
    assert 0 < len(walked) < children / 2  # most children took the previous version's definitions


def test_the_trees_parsed_here_of_the_paths_a_table_cache_adopts_are_handed_to_it_and_give_a_parse_s_tables():
    from portq.language.symbols import SymbolTableCache

    tables = SymbolTableCache(adopts=lambda path: path.startswith("ported/"))
    cache = DefinitionCache(trees_to=tables)
    versions = {"v1": SOURCE, "v2": NEXT, "v3": NEXT + b"\n\ndef added(y):\n    return y\n"}
    for blob, source in versions.items():
        cache.get(blob, "ported/box.py", lambda source=source: source)
    cache.get("moved", "other/box.py", lambda: SOURCE + b"# moved\n", "ported/box.py")  # renamed from an adopted path
    cache.get("elsewhere", "other/helper.py", lambda: SOURCE)
    for blob, source in [*versions.items(), ("moved", SOURCE + b"# moved\n")]:
        table = tables.get(blob, "ported/box.py", lambda: never(blob))
        fresh = symbol_table(source, "ported/box.py")
        assert summary(table) == summary(fresh) and table.source == source
        assert str(table.tree.root_node) == str(fresh.tree.root_node)
        assert [d.node.type for d in table.definitions] == [d.node.type for d in fresh.definitions]
    assert tables.adopted == 4
    assert not tables.has("elsewhere", "other/helper.py")  # not adopted: parsed when asked, as before
    assert summary(tables.get("elsewhere", "other/helper.py", lambda: SOURCE)) == summary(symbol_table(SOURCE, "x.py"))
    assert tables.adopted == 4


def test_a_table_cache_holds_handed_over_sources_up_to_its_bound_and_parses_the_rest_when_asked():
    from portq.language.symbols import SymbolTableCache

    tables = SymbolTableCache(adopts=lambda path: True, adopt_bytes=len(SOURCE) + len(NEXT))
    cache = DefinitionCache(trees_to=tables)
    for number, source in enumerate([SOURCE, NEXT, SOURCE + b"# third\n"]):
        cache.get(f"b{number}", f"pkg/m{number}.py", lambda source=source: source)
    assert tables.adopts("pkg/m3.py") is False  # the bound is spent
    loaded = []
    third = tables.get("b2", "pkg/m2.py", lambda: loaded.append("b2") or SOURCE + b"# third\n")
    assert loaded == ["b2"] and summary(third) == summary(symbol_table(SOURCE + b"# third\n", "pkg/m2.py"))
    assert tables.get("b1", "pkg/m1.py", lambda: never("b1")).tree is not None and tables.adopted == 1
