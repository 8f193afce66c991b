"""Property tests: what portq reads from commits and matrices never breaks it.

The matrix loader and the glob compiler raise nothing but ``MatrixError``;
the range parser answers a ``Range`` or a ``HistoryError``; the ``(#N)`` title
parser answers a storable PR number or None; hunk → symbol mapping of
generated diffs of generated C++ and Python files places every changed line
in exactly one symbol or the top level. The ledger's properties under
interleaved scans, reviews and kills are in ``test_properties_ledger.py``.

Examples are derandomized and bounded (``PROPERTIES``), so the suite is the
same on every run and stays quick on two cores. To search further, set
``PORTQ_PROPERTY_EXAMPLES=5000`` (random examples, that many per property)
and keep whatever it finds as an ``@example``.
"""
from __future__ import annotations

import difflib
import json
import os
import string

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from portq.classifier.mapping import ChangeMapper
from portq.core.errors import HistoryError, MatrixError
from portq.core.model import Commit, FileChange
from portq.language.symbols import symbol_table
from portq.tree.matrix import Matrix, glob_problem, glob_regex, path_matches
from portq.upstream.history import Upstream, pr_number
from portq.upstream.hunks import parse_hunks
from tests.portq.fixtures import CommitSpec, build_repository

_EXPLORE = int(os.environ.get("PORTQ_PROPERTY_EXAMPLES", "0"))
PROPERTIES = settings(
    derandomize=not _EXPLORE, database=None, max_examples=_EXPLORE or 150, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
FEW = settings(PROPERTIES, max_examples=_EXPLORE or 40)

GLOB_ALPHABET = "ab/.*?[]!-^\\z\n é"
paths = st.text(alphabet="ab/.-_\n é", max_size=24)
globs = st.text(alphabet=GLOB_ALPHABET, max_size=16)


# --- globs -------------------------------------------------------------------------------


@PROPERTIES
@given(pattern=globs, path=paths)
@example(pattern="csrc/[z-a].cu", path="csrc/a.cu")
@example(pattern="x[!", path="x[!")
@example(pattern="[]-]", path="-")
@example(pattern="[!]]", path="a")
@example(pattern="a[--0]", path="a-")
def test_the_glob_compiler_raises_only_matrix_errors(pattern, path):
    problem = glob_problem(pattern)
    try:
        matched = path_matches(pattern, path)
    except MatrixError as error:
        assert problem is not None and problem in str(error)
        return
    assert problem is None and matched in (True, False)


@PROPERTIES
@given(components=st.lists(st.text(alphabet="ab.-_\n é", min_size=1, max_size=6), min_size=1, max_size=4))
def test_a_literal_path_matches_itself_and_its_directory_glob_everything_below(components):
    assume(all(c not in (".", "..") for c in components))
    literal = "/".join(components)
    assert path_matches(literal, literal)
    assert path_matches(literal + "/", literal + "/below\nx.cu")
    assert not path_matches(literal, literal + "\n")


@PROPERTIES
@given(left=st.text(alphabet="ab.\n", min_size=1, max_size=5), right=st.text(alphabet="ab.\n", min_size=1, max_size=5))
def test_a_star_stays_in_its_component_and_a_double_star_crosses_them(left, right):
    assume(all(c not in (".", "..") for c in (left, right)))
    assert not path_matches("*", f"{left}/{right}")
    assert path_matches("**", f"{left}/{right}")
    assert path_matches(f"**/{right}", f"{left}/{right}") and path_matches(f"**/{right}", right)


@PROPERTIES
@given(pattern=globs)
def test_the_loader_accepts_exactly_the_globs_the_compiler_accepts(pattern):
    text = f'[[row]]\nid = "A"\nupstream = "up"\npaths = [{json.dumps(pattern)}]\n'
    try:
        matrix = Matrix.parse(text, "m.toml")
    except MatrixError:
        assert pattern == "" or glob_problem(pattern) is not None
        return
    assert glob_problem(pattern) is None
    glob_regex(matrix.rows[0].paths[0])


# --- the matrix loader ---------------------------------------------------------------------

toml_values = st.recursive(
    st.one_of(st.integers(), st.booleans(), globs, st.text(max_size=8)),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)
row_keys = st.sampled_from(["id", "title", "upstream", "paths", "exclude", "symbols", "tree", "tests", "other", "row"])


def _toml_value(value) -> str:
    return json.dumps(value) if not isinstance(value, bool) else str(value).lower()


@st.composite
def matrices(draw) -> str:
    """Matrix-shaped TOML: real keys with arbitrary values, headers, junk lines."""
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        lines.append(draw(st.sampled_from(["[[row]]", "[row]", "[[rows]]", "[[row]] # c", "[upstream.x]"])))
        for _ in range(draw(st.integers(0, 6))):
            key = draw(row_keys)
            value = draw(st.one_of(
                st.just('"A"'), st.just('"up"'), st.builds(_toml_value, toml_values),
                st.builds(lambda gs: json.dumps(gs), st.lists(globs, max_size=3)),
            ))
            lines.append(f"{key} = {value}")
        if draw(st.booleans()):
            lines.append(draw(st.text(max_size=12)))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


@PROPERTIES
@given(text=st.one_of(matrices(), st.text(max_size=60)))
@example(text='[[row]]\nid = "A"\nupstream = "up"\npaths = ["csrc/[z-a].cu"]\n')
@example(text='[[row]]\nid = "A"\nupstream = "up"\nexclude = ["***"]\nsymbols = ["f"]\n')
@example(text="row = 1\n")
@example(text="[[row]]\n" * 3)
def test_the_matrix_loader_raises_only_matrix_errors(text):
    try:
        matrix = Matrix.parse(text, "m.toml")
    except MatrixError as error:
        assert str(error).startswith("m.toml:")  # the file and a line number (or '?') come first
        return
    for row in matrix.rows:  # whatever loads can answer ownership questions
        matrix.claims(row.upstream, "csrc/a\nb.cu", ["f"])


@FEW
@given(data=st.binary(max_size=80))
def test_a_matrix_file_of_any_bytes_is_read_or_refused_with_a_matrix_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("matrix") / "m.toml"
    path.write_bytes(data)
    try:
        Matrix.load(path)
    except MatrixError as error:
        assert str(path) in str(error)


# --- the (#N) title parser -------------------------------------------------------------------


@PROPERTIES
@given(title=st.text(max_size=80))
@example(title="x (#" + "9" * 5000 + ")")
@example(title="x (#١٢٣)")
def test_the_pr_parser_answers_a_storable_number_or_none(title):
    number = pr_number(title)
    assert number is None or (isinstance(number, int) and 0 < number < 2**63)


@PROPERTIES
@given(title=st.text(max_size=40), number=st.integers(1, 2**63 - 1), trailing=st.sampled_from(["", " ", "\t"]))
def test_the_pr_number_of_a_squash_title_round_trips(title, number, trailing):
    assert pr_number(f"{title} (#{number}){trailing}") == number


@PROPERTIES
@given(title=st.text(max_size=40), number=st.integers(2**63, 10**40))
def test_a_pr_number_past_the_ledgers_integers_is_no_pr_number(title, number):
    assert pr_number(f"{title} (#{number})") is None


# --- the range parser ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    path = tmp_path_factory.mktemp("ranges") / "up"
    shas = build_repository(path, [
        CommitSpec("base", files={"a.py": "x = 0\n"}, tag="base"),
        *[CommitSpec(f"step {i} (#{i})", files={"a.py": f"x = {i}\n"}) for i in range(1, 4)],
        CommitSpec("side", branch="side", files={"b.py": "y = 1\n"}),
        CommitSpec("merge", branch="main", merge="side", tag="tip"),
    ])
    with Upstream(path, "up") as opened:
        yield opened, shas


revision_words = st.sampled_from(
    ["base", "tip", "main", "side", "HEAD", "HEAD~1", "HEAD^2", "tip~9", "nope", "-x", "@{u}", ":/step", "", " "]
)
range_text = st.one_of(
    st.builds(lambda a, sep, b: f"{a}{sep}{b}", revision_words, st.sampled_from(["..", "...", ".", "..\n", ""]),
              revision_words),
    st.text(alphabet=string.ascii_letters + ".~^:@{}-\n /", max_size=20),
)


@FEW
@given(spec=range_text)
@example(spec="base..tip")
@example(spec="tip..base")
@example(spec="base..tip\n")
def test_the_range_parser_answers_a_range_or_a_history_error(upstream, spec):
    repository, shas = upstream
    try:
        resolved = repository.resolve_range(spec)
    except HistoryError as error:
        assert error.exit_code == 2, str(error)
        return
    assert len(resolved) >= 1 and len(set(resolved.shas)) == len(resolved.shas)
    assert set(resolved.shas) <= set(shas)


@FEW
@given(base=st.integers(0, 5), tip=st.integers(0, 5))
def test_a_range_of_known_commits_lists_the_first_parent_commits_between_them(upstream, base, tip):
    repository, shas = upstream
    first_parent = [shas[i] for i in (0, 1, 2, 3, 5)]  # the side commit is reached through the merge only
    assume(shas[base] in first_parent and shas[tip] in first_parent)
    spec = f"{shas[base][:10]}..{shas[tip][:12]}"
    low, high = first_parent.index(shas[base]), first_parent.index(shas[tip])
    if high <= low:
        with pytest.raises(HistoryError):
            repository.resolve_range(spec)
        return
    assert repository.resolve_range(spec).shas == tuple(first_parent[low + 1:high + 1])


# --- hunk → symbol mapping ----------------------------------------------------------------------

identifiers = st.sampled_from(["alpha", "beta", "gamma", "delta", "kernel", "launch", "gather", "scale"])


@st.composite
def python_source(draw) -> list[str]:
    """A Python file: functions, classes with methods, decorated kernels, top-level statements."""
    lines: list[str] = []
    for index in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["def", "class", "jit", "stmt", "blank"]))
        name = f"{draw(identifiers)}_{index}"
        if kind == "def":
            lines.append(f"def {name}(x):")
            lines += [f"    x = x + {i}" for i in range(draw(st.integers(1, 4)))] + ["    return x"]
        elif kind == "jit":
            lines += ["@triton.jit", f"def {name}(ptr, BLOCK: tl.constexpr):", "    pid = tl.program_id(0)"]
        elif kind == "class":
            lines.append(f"class {name.title()}:")
            for method in range(draw(st.integers(1, 3))):
                lines += [f"    def m{method}(self):", f"        return {method}"]
        elif kind == "stmt":
            lines.append(f"{name.upper()} = {index}")
        else:
            lines.append("")
        lines.append("")
    return lines


@st.composite
def cpp_source(draw) -> list[str]:
    """A C++/CUDA file: functions, kernels, structs, namespaces, templates, includes."""
    lines: list[str] = []
    for index in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["fn", "kernel", "struct", "namespace", "template", "include", "blank"]))
        name = f"{draw(identifiers)}_{index}"
        body = [f"  int v{i} = {i};" for i in range(draw(st.integers(1, 4)))]
        if kind == "fn":
            lines += [f"void {name}(int n) {{", *body, "}"]
        elif kind == "kernel":
            lines += [f"__global__ void {name}(float* out) {{", *body, "}"]
        elif kind == "struct":
            lines += [f"struct {name.title()} {{", "  int a;", f"  int get() const {{ return a; }}", "};"]
        elif kind == "namespace":
            lines += [f"namespace ns{index} {{", f"void {name}() {{", *body, "}", f"}}  // namespace ns{index}"]
        elif kind == "template":
            lines += ["template <typename T>", f"T {name}(T x) {{", *body, "  return x;", "}"]
        elif kind == "include":
            lines.append(f"#include <h{index}.h>")
        else:
            lines.append("")
        lines.append("")
    return lines


@st.composite
def edited(draw) -> tuple[str, str, str]:
    """(path, old text, new text): a generated file and random line edits of it."""
    suffix, old_lines = draw(st.one_of(
        st.tuples(st.just(".py"), python_source()), st.tuples(st.sampled_from([".cu", ".cpp", ".h"]), cpp_source())
    ))
    new_lines = list(old_lines)
    for _ in range(draw(st.integers(1, 5))):
        operation = draw(st.sampled_from(["replace", "insert", "delete"]))
        at = draw(st.integers(0, max(len(new_lines) - 1, 0)))
        if operation == "delete" and new_lines:
            del new_lines[at]
            continue
        neighbour = new_lines[min(at, len(new_lines) - 1)] if new_lines else ""
        indent = neighbour[:len(neighbour) - len(neighbour.lstrip())]
        if suffix == ".py":
            text = indent + draw(st.sampled_from(["y = 1", "pass", "# note", "", "z = y"]))
        else:
            text = indent + draw(st.sampled_from(["int w = 2;", "// note", "", "w += 1;"]))
        if operation == "replace" and new_lines:
            new_lines[at] = text
        else:
            new_lines.insert(at, text)
    old, new = "\n".join(old_lines) + "\n", "\n".join(new_lines) + "\n"
    assume(old != new)
    return f"src/file{suffix}", old, new


def _diff(path: str, old: str, new: str, context: int) -> str:
    body = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}", n=context)
    return f"diff --git a/{path} b/{path}\n" + "".join(body)


OWN_EVERYTHING = Matrix.parse('[[row]]\nid = "ALL"\nupstream = "up"\npaths = ["**"]\n')


@PROPERTIES
@given(change=edited(), context=st.integers(0, 3))
def test_every_changed_line_lands_in_exactly_one_symbol_or_the_top_level(change, context):
    path, old, new = change
    patch = _diff(path, old, new, context)
    blobs = {"o" * 40: old.encode(), "n" * 40: new.encode()}
    file_change = FileChange("modified", path, path, old_blob="o" * 40, new_blob="n" * 40, patch=patch)
    entry = ChangeMapper(OWN_EVERYTHING, "up", blobs.__getitem__).map_commit(
        1, Commit("s" * 40, (), "t", "t", "a", "d", changes=[file_change]))
    symbols = entry.symbols
    assert entry.rows == ("ALL",)
    tables = {"old": symbol_table(old.encode(), path), "new": symbol_table(new.encode(), path)}
    hunks = parse_hunks(patch)
    changed = {
        "old": [(n, t) for h in hunks for n, t in zip(h.removed_lines, h.removed_text)],
        "new": [(n, t) for h in hunks for n, t in zip(h.added_lines, h.added_text)],
    }
    if any(t.fallback for t in tables.values()):
        (only,) = symbols  # one <lines> symbol spans everything
        assert only.name == "<lines>"
        return
    innermost_hits = {id(s): 0 for s in symbols}
    for side, lines in changed.items():
        for number, text in lines:
            definition = tables[side].enclosing(number)
            if definition is None and not text.strip():
                continue  # a blank line between definitions belongs to nothing
            if definition is None:
                owners = [s for s in symbols if s.name == "<toplevel>" and _covers(s, side, number)]
            else:
                span = (definition.start_line, definition.end_line)
                owners = [s for s in symbols if s.qualified_name == definition.qualified_name
                          and getattr(s, f"{side}_lines") == span]
            assert len(owners) == 1, (side, number, text, [(s.qualified_name, s.old_lines, s.new_lines) for s in symbols])
            innermost_hits[id(owners[0])] += 1
    assert all(innermost_hits.values()), "a symbol was reported that no changed line is in"


def _covers(symbol, side: str, number: int) -> bool:
    span = getattr(symbol, f"{side}_lines")
    return span is not None and span[0] <= number <= span[1]
