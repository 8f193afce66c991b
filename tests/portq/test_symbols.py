"""Symbol tables: which definitions a C++/CUDA or Python file has, and their lines."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from portq.language.symbols import KIND_CLASS, KIND_DEVICE_FUNCTION, KIND_METHOD, symbol_table

CUDA = b"""\
namespace vllm {
// A page task.
struct GatherPageTask {
  int32_t req_id;
  int32_t logical_block;
  int32_t first() const { return logical_block; }
};

template <int N>
struct Tiled {
  int rows[N];
};

typedef struct {
  int x;
} Pair;

struct Forward;

__device__ bool map_gather_page_task(int32_t task, GatherPageTask* out) {
  out->req_id = task;
  return true;
}
}  // namespace vllm
"""


def _definitions():
    return {d.qualified_name: d for d in symbol_table(CUDA, "a.cu").definitions}


def test_namespace_level_struct_is_a_class_definition_over_its_lines():
    struct = _definitions()["vllm::GatherPageTask"]
    assert (struct.kind, struct.start_line, struct.end_line) == (KIND_CLASS, 3, 7)


def test_struct_members_are_qualified_by_the_struct():
    method = _definitions()["vllm::GatherPageTask::first"]
    assert method.kind == KIND_METHOD


def test_a_field_line_maps_to_its_struct_not_to_the_top_level():
    table = symbol_table(CUDA, "a.cu")
    assert table.enclosing(5).qualified_name == "vllm::GatherPageTask"


def test_template_struct_spans_its_template_line_and_typedef_struct_takes_its_alias():
    definitions = _definitions()
    assert (definitions["vllm::Tiled"].start_line, definitions["vllm::Tiled"].end_line) == (9, 12)
    assert definitions["vllm::Pair"].kind == KIND_CLASS


def test_forward_declaration_is_not_a_definition():
    assert "vllm::Forward" not in _definitions()


def test_functions_next_to_structs_keep_their_kind():
    assert _definitions()["vllm::map_gather_page_task"].kind == KIND_DEVICE_FUNCTION


# --- incremental parsing: an earlier version's tree, the same definitions ------

import random  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from portq.language.symbols import source_edit  # noqa: E402

PYTHON = b'''\
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(dst_ptr + pid, tl.load(src_ptr + pid))


class Cache:
    """A cache."""

    def gather(self, index):
        def helper(i):
            return i + 1
        return [helper(i) for i in index]

    if True:
        def guarded(self):
            return 2


def copy(src, dst, block=64):
    _copy_kernel[(1,)](src, dst, src.numel(), BLOCK=block)
    return dst
'''
FRAGMENTS = {
    "a.cu": [b"{", b"}", b"(", b")", b";", b"\n", b"  int x = 1;\n", b"/*", b"*/", b"#if 0\n", b"#endif\n",
             b"namespace extra {\n", b"}  // namespace extra\n", b"template <typename T>\n",
             b"__global__ void added_kernel(int* p) {\n  p[0] = 1;\n}\n", b"struct Made { int y; };\n",
             b"void Cls::method() {}\n", b'ops.def("made(Tensor a) -> ()");\n', b"\"", b"x"],
    "a.py": [b":", b"(", b")", b"\n", b"    ", b"\n    x = 1\n", b"def ", b"class Made:\n    pass\n",
             b"@triton.jit\n", b"def added(x):\n    return x\n", b'"""', b"#", b"\n\n\ndef top():\n    pass\n",
             b"        def inner():\n            pass\n", b"try:\n", b"except Exception:\n    pass\n", b"x"],
}
SOURCES = {"a.cu": CUDA, "a.py": PYTHON}


def summary(table):
    return table.fallback, [(d.name, d.qualified_name, d.kind, d.start_line, d.end_line) for d in table.definitions]


def random_edit(rng: random.Random, source: bytes, fragments: list[bytes], original: bytes) -> bytes:
    """An insertion, deletion or replacement at the start, the middle or the end; now and then the
    original back (an edit that repairs whatever the earlier ones broke)."""
    if rng.random() < 0.08:
        return original
    where = rng.choice(("start", "end", "middle", "middle", "line"))
    if where == "start":
        start = 0
    elif where == "end":
        start = len(source)
    elif where == "line":
        starts = [0] + [i + 1 for i, byte in enumerate(source) if byte == 10]
        start = rng.choice(starts)
    else:
        start = rng.randrange(len(source) + 1)
    operation = rng.choice(("insert", "delete", "replace"))
    end = start if operation == "insert" else min(len(source), start + rng.randrange(1, 40))
    if operation == "delete" and where == "end":
        start, end = max(0, len(source) - rng.randrange(1, 40)), len(source)
    inserted = b"" if operation == "delete" else rng.choice(fragments)
    return source[:start] + inserted + source[end:]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("path", ["a.cu", "a.py"])
def test_a_table_parsed_from_the_previous_version_equals_a_fresh_parse_over_random_edits(path, seed):
    rng = random.Random(seed)
    original = SOURCES[path]
    source, previous = original, symbol_table(original, path)
    broken = 0
    for step in range(150):
        source = random_edit(rng, source, FRAGMENTS[path], original)
        incremental = symbol_table(source, path, previous)
        fresh = symbol_table(source, path)
        assert summary(incremental) == summary(fresh), (step, source)
        broken += fresh.tree.root_node.has_error
        previous = incremental
    assert 10 < broken < 150  # the edits broke syntax and repaired it again


def test_the_edit_spans_the_bytes_between_the_common_prefix_and_suffix_as_offsets_and_points():
    old, new = b"ab\ncd\nef\n", b"ab\ncXYZ\nd\nef\n"
    assert source_edit(old, new) == (4, 4, 8, (1, 1), (1, 1), (2, 0))
    assert source_edit(b"same", b"same") == (4, 4, 4, (0, 4), (0, 4), (0, 4))
    assert source_edit(b"x\n", b"") == (0, 2, 0, (0, 0), (1, 0), (0, 0))


def test_every_version_of_the_synthetic_history_files_parses_alike_from_its_predecessor(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        from synthetic_history import generate
    finally:
        sys.path.pop(0)
    from portq.upstream.history import Upstream

    generate(tmp_path, 400)
    with Upstream(tmp_path / "upstream", "upstream") as upstream:
        revisions = upstream.resolve_range("base..tip")
        versions: dict[str, list[str]] = {}
        for commit in upstream.commits(revisions):
            for change in commit.changes:
                if change.new_blob and change.new_path.endswith((".cu", ".py")):
                    chain = versions.pop(change.old_path, None) or [change.old_blob] * bool(change.old_blob)
                    versions[change.new_path] = chain + [change.new_blob]
        blobs = upstream.read_blobs(sorted({blob for chain in versions.values() for blob in chain}))
    compared = 0
    for path, chain in versions.items():
        previous = None
        for blob in chain:
            incremental = symbol_table(blobs[blob], path, previous)
            assert summary(incremental) == summary(symbol_table(blobs[blob], path)), (path, blob)
            previous, compared = incremental, compared + 1
    assert len(versions) == 48 and compared > 250


def _scan_enclosing(definitions, line):
    best = None
    for definition in definitions:
        if definition.contains(line) and (best is None or definition.span <= best.span):
            best = definition
    return best


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(-2, 15)), max_size=12))
def test_a_table_asked_often_answers_as_the_scan_of_its_definitions(spans):
    from portq.language.symbols import SCANS_BEFORE_LINE_MAP, Definition, SymbolTable

    definitions = [Definition(f"f{i}", f"f{i}", "function", "python", start, start + length)
                   for i, (start, length) in enumerate(spans)]
    table = SymbolTable("python", definitions)
    lines = list(range(-1, 60))
    answers = [table.enclosing(line) for line in lines * 2]  # past the scans, from the line map
    assert len(lines) * 2 > SCANS_BEFORE_LINE_MAP and table._innermost is not None
    expected = [_scan_enclosing(definitions, line) for line in lines * 2]
    assert [id(a) for a in answers] == [id(e) for e in expected]


def test_a_cache_walking_versions_in_order_parses_each_from_the_last_and_finds_what_a_fresh_parse_finds(monkeypatch):
    import portq.language.symbols as symbols

    versions = [b"def f(a):\n    return a\n"]
    for n in range(1, 6):
        versions.append(versions[-1] + f"\n\ndef g{n}(b, c={n}):\n    return b\n".encode())
    versions.append(versions[-1].replace(b"def f(a)", b"class K:\n    def f(self, a)"))
    seeded = []
    parse = symbols.parse
    monkeypatch.setattr(symbols, "parse", lambda source, language, previous=None: (
        seeded.append(previous is not None), parse(source, language, previous))[1])
    cache = symbols.SymbolTableCache()
    for number, source in enumerate(versions):
        path = "k/ops.py" if number < 4 else "k/renamed.py"
        table = cache.get(f"{number:040x}", path, lambda: source, "k/ops.py" if number == 4 else None)
        fresh = symbol_table(source, path)
        assert [(d.qualified_name, d.kind, d.start_line, d.end_line) for d in table.definitions] == \
               [(d.qualified_name, d.kind, d.start_line, d.end_line) for d in fresh.definitions]
    assert seeded[::2] == [False, True, True, True, True, True, True]  # every cache parse after the first is seeded
    assert cache.get(f"{0:040x}", "k/ops.py", lambda: b"never read") is not None


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab./_C", max_size=12))
def test_a_path_s_suffix_is_the_one_pure_posix_path_gives(path):
    from pathlib import PurePosixPath

    from portq.language.symbols import _suffix

    assert _suffix(path) == PurePosixPath(path).suffix
