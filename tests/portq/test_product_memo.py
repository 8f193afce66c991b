"""Per-definition products computed once per content, kept across scans, never trusted when stale.

The memo (``portq.language.memo``) and its store (``portq.tree.product_store``)
must change nothing a scan decides: the last tests scan the demo's histories
and a dense synthetic history with the memo off and on and compare every
byte of the output.
"""
from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import nullcontext
from pathlib import Path

import pytest

from portq.cli import main
from portq.language import memo
from portq.language.memo import MEMO, Codec, ProductMemo, content_key, disabled, per_definition
from portq.language.signatures import definition_tokens, nodes_of, walk
from portq.language.symbols import parse, symbol_table
from portq.tree.product_store import ProductStore

REPO = Path(__file__).resolve().parents[2]

SOURCE = b'''import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


class Holder:
    def copy(self, src, dst, n):
        grid = (triton.cdiv(n, 64),)
        _copy[grid](src, dst, n, BLOCK=64)
        return dst
'''


# --- queries give what a walk gives -------------------------------------------------

TYPE_SETS = [("identifier",), ("call",), ("assignment", "augmented_assignment"),
             ("assignment", "for_statement", "binary_operator"), ("block", "expression_statement"),
             ("string", "string_content")]


@pytest.mark.parametrize("relative", ["portq/language/signatures_python.py", "portq/classifier/deltas.py",
                                      "benchmarks/synthetic_history.py"])
def test_nodes_of_finds_what_a_filtered_walk_finds_in_the_same_order(relative):
    tree = parse((REPO / relative).read_bytes(), "python")
    subtrees = [tree.root_node] + [n for n in tree.root_node.children if n.type in
                                   ("function_definition", "decorated_definition", "class_definition")][:40]
    for node in subtrees:
        for types in TYPE_SETS:
            walked = [n.id for n in walk(node) if n.type in types]
            assert [n.id for n in nodes_of(node, types, "python")] == walked, (relative, node.type, types)


def test_nodes_of_finds_what_a_filtered_walk_finds_in_cuda_sources():
    paths = sorted((REPO / "examples" / "upstream").rglob("*.cu"))[:12]
    assert paths
    for path in paths:
        root = parse(path.read_bytes(), "cpp").root_node
        for types in [("init_declarator", "declaration", "for_range_loop"), ("identifier",), ("call_expression",)]:
            assert [n.id for n in nodes_of(root, types, "cpp")] == [n.id for n in walk(root) if n.type in types]


def test_nodes_of_a_subtree_with_a_syntax_error_is_the_walk():
    tree = parse(b"def f(x):\n    y = (x +\n    return y\n\ndef g(a):\n    b = a\n", "python")
    assert tree.root_node.has_error
    for types in TYPE_SETS:
        assert [n.id for n in nodes_of(tree.root_node, types, "python")] == \
            [n.id for n in walk(tree.root_node) if n.type in types]


# --- the memo -------------------------------------------------------------------------


def definitions_of(source: bytes):
    table = symbol_table(source, "a.py")
    return {d.qualified_name: d for d in table.definitions}


def test_a_product_is_computed_once_per_content_whatever_blob_it_comes_from():
    calls = []

    @per_definition("test-token-count")
    def token_count(node):
        calls.append(node.text)
        return len(definition_tokens(node))

    own = ProductMemo()
    saved, memo.MEMO = memo.MEMO, own
    try:
        first = definitions_of(SOURCE)
        moved = definitions_of(b"import os\n\n\n" + SOURCE)  # the same definitions three lines lower
        assert token_count(first["_copy"].node) == token_count(moved["_copy"].node)
        assert len(calls) == 1 and own.reused == 1
        token_count(first["Holder.copy"].node)  # another definition: another content
        assert len(calls) == 2
    finally:
        memo.MEMO = saved


def test_the_key_reads_the_column_the_type_the_text_and_the_arguments():
    table = definitions_of(SOURCE)
    method = table["Holder.copy"].node
    dedented = definitions_of(b"def copy(self, src, dst, n):\n" + b"\n".join(
        line[4:] for line in method.text.split(b"\n")[1:]))["copy"].node
    assert content_key(method) != content_key(dedented)  # the column differs: Python reads indentation
    assert content_key(method, ("python",)) != content_key(method, ("cpp",))
    assert content_key(method) == content_key(definitions_of(SOURCE)["Holder.copy"].node)


def test_with_the_memo_off_every_product_is_computed():
    calls = []

    @per_definition("test-off")
    def product(node):
        calls.append(1)
        return node.type

    node = definitions_of(SOURCE)["_copy"].node
    with disabled():
        product(node)
        product(node)
    assert len(calls) == 2


class FakeBacking:
    def __init__(self, rows=None):
        self.rows = dict(rows or {})

    def get(self, product, key):
        return self.rows.get((product, key))

    def put(self, product, key, text):
        self.rows[(product, key)] = text


def test_a_stored_product_that_does_not_decode_is_computed_again_never_trusted():
    node = definitions_of(SOURCE)["_copy"].node
    strings = Codec(decode=lambda v: [str(s) for s in v] if isinstance(v, list) else int("not a list"))
    key = content_key(node)
    for damaged in ("{not json", json.dumps({"a": 1})):
        own = ProductMemo()
        own.backing = FakeBacking({("tokens", key): damaged})
        value = own.lookup("tokens", key, lambda: ["computed"], strings)
        assert value == ["computed"] and own.computed == 1 and own.recalled == 0
        assert own.backing.rows[("tokens", key)] == '["computed"]'  # the good value replaces it


def test_the_memo_in_memory_is_bounded_least_recently_used_first():
    own = ProductMemo(bound=2)
    for key in ("a", "b"):
        own.lookup("p", key, lambda: key, Codec())
    own.lookup("p", "a", lambda: "again", Codec())  # a is used: b is now the oldest
    own.lookup("p", "c", lambda: "c", Codec())
    assert len(own) == 2 and own.lookup("p", "a", lambda: "recomputed", Codec()) == "a"
    assert own.lookup("p", "b", lambda: "recomputed", Codec()) == "recomputed"


# --- the store across scans ------------------------------------------------------------


def test_a_later_scan_reads_the_products_an_earlier_one_stored(tmp_path):
    path = tmp_path / "definitions.sqlite"
    first = ProductStore(path, version="v1")
    first.put("tokens", "k1", '["a"]')
    first.close()
    second = ProductStore(path, version="v1")
    assert second.get("tokens", "k1") == '["a"]' and second.get("tokens", "k2") is None
    second.close()
    assert second.recalled == 1 and second.problem is None


def test_products_of_another_version_are_never_read_and_are_dropped_at_the_first_write(tmp_path):
    path = tmp_path / "definitions.sqlite"
    old = ProductStore(path, version="old")
    old.put("tokens", "k1", '["old"]')
    old.close()
    new = ProductStore(path, version="new")
    assert new.get("tokens", "k1") is None
    new.put("tokens", "k2", '["new"]')
    new.close()
    rows = sqlite3.connect(path).execute("SELECT version, key FROM products").fetchall()
    assert rows == [("new", "k2")]


def test_a_store_over_its_bound_is_trimmed_least_recently_used_first(tmp_path):
    path = tmp_path / "definitions.sqlite"
    first = ProductStore(path, version="v", bound=3)
    for key in ("a", "b", "c"):
        first.put("p", key, '"x"')
    first.close()
    second = ProductStore(path, version="v", bound=3)
    assert second.get("p", "a") == '"x"'  # used by this scan: kept
    second.put("p", "d", '"y"')
    second.close()
    assert second.trimmed == 1
    kept = {row[0] for row in sqlite3.connect(path).execute("SELECT key FROM products")}
    assert kept == {"a", "c", "d"}  # b, written by the first scan and not used since, went first


@pytest.mark.parametrize("damage", ["truncated", "not sqlite", "another program's table"])
def test_an_unusable_store_file_is_rebuilt_never_read(tmp_path, damage):
    path = tmp_path / "definitions.sqlite"
    good = ProductStore(path, version="v")
    good.put("p", "k", '"stored"')
    good.close()
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:700])
    elif damage == "not sqlite":
        path.write_bytes(b"this is not a database at all" * 100)
    else:
        path.unlink()
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE products (name TEXT)")
        db.commit()
        db.close()
    store = ProductStore(path, version="v")
    assert store.get("p", "k") is None
    store.put("p", "k2", '"new"')
    store.close()
    assert store.replaced is not None and store.problem is None
    assert ProductStore(path, version="v").get("p", "k2") == '"new"'


def test_a_locked_store_is_set_aside_and_the_products_are_computed(tmp_path):
    path = tmp_path / "definitions.sqlite"
    ProductStore(path, version="v").close()
    first = ProductStore(path, version="v")
    first.put("p", "k", '"x"')
    first.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store = ProductStore(path, version="v", busy_timeout_s=0.2)
        own = ProductMemo()
        own.backing = store
        assert own.lookup("p", "k", lambda: "computed", Codec()) == "computed"
        store.close()
        assert store.problem is not None and "locked" in store.problem
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# --- verdicts are the same with the memo off and on -----------------------------------


def scan_output(capsys, arguments: list[str], memo_off: bool) -> str:
    MEMO.clear()
    with disabled() if memo_off else nullcontext():
        assert main(["scan", *arguments, "--json"]) == 0
    return capsys.readouterr().out


def test_a_dense_synthetic_history_is_decided_alike_with_the_memo_off_and_on(tmp_path, capsys):
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from synthetic_history import generate
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    generate(tmp_path, 300)
    common = ["base..tip", "--upstream", str(tmp_path / "upstream"), "--matrix", str(tmp_path / "matrix.toml"),
              "--tree", str(tmp_path / "tree")]
    off = scan_output(capsys, common + ["--ledger", str(tmp_path / "off" / "ledger.sqlite")], memo_off=True)
    on = scan_output(capsys, common + ["--ledger", str(tmp_path / "on" / "ledger.sqlite")], memo_off=False)
    assert MEMO.computed > 0  # the memo was asked
    assert json.loads(off)["entries"] and off == on


def decided(output: str) -> list:
    """Each entry as the scan decided it (how it came by the decision, reused or decided now, left out)."""
    return [{k: v for k, v in e.items() if k not in ("source", "scan_verdict")} for e in json.loads(output)["entries"]]


def test_a_rescan_after_an_edit_reads_the_products_back_and_decides_as_an_uncached_fresh_scan(tmp_path, capsys):
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from synthetic_history import generate
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    generate(tmp_path, 200)
    common = ["base..tip", "--upstream", str(tmp_path / "upstream"), "--matrix", str(tmp_path / "matrix.toml"),
              "--tree", str(tmp_path / "tree")]
    ledger = ["--ledger", str(tmp_path / "kept" / "ledger.sqlite")]
    scan_output(capsys, common + ledger, memo_off=False)
    ported = tmp_path / "tree" / "ops" / "ports.py"
    ported.write_text(ported.read_text() + "\n# an edit: the rows of this file are decided again\n")
    again = scan_output(capsys, common + ledger, memo_off=False)  # a new process: the memo starts empty
    assert MEMO.recalled > 0 and MEMO.computed == 0
    fresh = scan_output(capsys, common + ["--ledger", str(tmp_path / "fresh" / "ledger.sqlite")], memo_off=True)
    assert decided(again) == decided(fresh)


def test_the_demo_histories_are_decided_alike_with_the_memo_off_and_on(tmp_path, capsys):
    from portq.pipeline.demo import run_demo

    def outcomes(workdir: Path, memo_off: bool):
        MEMO.clear()
        with disabled() if memo_off else nullcontext():
            result = run_demo(workdir)
        return [(o.target, o.series, o.position, o.verdict, o.justification) for o in result.outcomes], \
            {target: path.read_text() for target, path in result.summaries.items()}

    off = outcomes(tmp_path / "off", True)
    on = outcomes(tmp_path / "on", False)
    assert off == on and len(off[0]) >= 25


# --- a long scan's JSON is written entry by entry -----------------------------------


class Pipe:
    """A stream that is not a terminal, as stdout in a pipe."""

    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def isatty(self):
        return False

    def text(self):
        return "".join(self.parts)


def test_a_streamed_list_prints_the_bytes_json_dumps_gives_for_the_whole_document():
    from portq.reporting.output import Streamed, print_json

    items = [{"n": n, "text": "caf\u00e9 \u202e", "nested": [n, None, True]} for n in range(5)]
    made = []
    for entries in (items, [], items[:1]):
        document = {"wave": "PORTQ-1", "entries": Streamed(entries, dict, made.append), "tail": [1, 2]}
        pipe = Pipe()
        print_json(document, pipe)
        plain = {"wave": "PORTQ-1", "entries": [dict(e) for e in entries], "tail": [1, 2]}
        assert pipe.text() == json.dumps(plain, ensure_ascii=True) + "\n"
    assert made == items + items[:1]  # each told once it was written

    class Terminal(Pipe):
        def isatty(self):
            return True

    terminal = Terminal()
    print_json({"entries": Streamed(items, dict)}, terminal)
    assert terminal.text() == json.dumps({"entries": items}, indent=2, ensure_ascii=True) + "\n"


def test_a_printed_record_forgets_what_its_events_decoded_and_decodes_it_again_when_asked(tmp_path, capsys):
    from portq.reporting.output import entry_json, forget_decoded

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from synthetic_history import generate
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    generate(tmp_path, 60)
    from portq.ledger.store import open_ledger

    ledger_path = tmp_path / "ledger" / "ledger.sqlite"
    assert main(["scan", "base..tip", "--json", "--upstream", str(tmp_path / "upstream"), "--matrix",
                 str(tmp_path / "matrix.toml"), "--tree", str(tmp_path / "tree"), "--ledger", str(ledger_path)]) == 0
    printed = json.loads(capsys.readouterr().out)["entries"]
    with open_ledger(ledger_path, create=False) as ledger:
        records = ledger.wave_entries(ledger.latest_wave())
    record = next(r for r in records if r.current.event is not None)
    before = entry_json(record)
    assert "evidence" in record.current.event.__dict__
    forget_decoded(record)
    assert "evidence" not in record.current.event.__dict__
    assert entry_json(record) == before == next(e for e in printed if e["entry"] == record.position)


# --- trees mapping parsed, handed to the classifier ----------------------------------


def test_trees_of_other_files_are_handed_over_in_a_room_of_their_own_oldest_dropped_first():
    from portq.language.symbols import SymbolTableCache

    versions = [SOURCE + f"\n\nVERSION = {n}\n".encode() for n in range(3)]
    size = len(versions[0])
    tables = SymbolTableCache(adopts=lambda path: path == "anchored.py", also_adopts=lambda path: True,
                              spare_bytes=2 * size + 1)
    for n, source in enumerate(versions):
        assert tables.adopts("other.py")
        tables.adopt(f"b{n}", "other.py", parse(source, "python"), source)
    tables.adopt("a0", "anchored.py", parse(versions[0], "python"), versions[0])
    loads = []

    def load(source):
        return lambda: loads.append(source) or source

    kept = tables.get("b2", "other.py", load(versions[2]))
    assert loads == [] and tables.adopted == 1  # built from the handed-over tree
    assert [(d.qualified_name, d.start_line, d.end_line) for d in kept.definitions] == \
        [(d.qualified_name, d.start_line, d.end_line) for d in symbol_table(versions[2], "other.py").definitions]
    tables.get("a0", "anchored.py", load(versions[0]))
    assert loads == [] and tables.adopted == 2  # the anchored tree was not crowded out
    tables.get("b0", "other.py", load(versions[0]))  # the oldest spare tree made room for the third
    assert loads == [versions[0]] and tables.adopted == 2
