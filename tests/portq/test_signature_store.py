"""Upstream signatures kept across scans: computed once per blob and definition, never trusted when stale."""
from __future__ import annotations

import json
import sqlite3
from types import SimpleNamespace

import pytest

from portq.classifier.verdicts import SymbolClassifier, signature_rules
from portq.language.signatures import Signature
from portq.language.symbols import SymbolTableCache
from portq.tree.symbol_cache import SignatureStore

PATH = "aiter/ops/triton/gather.py"
SOURCE = b'''import triton
import triton.language as tl


@triton.jit
def _gather_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def gather(src, dst, n, unused=None):
    grid = (triton.cdiv(n, 64),)
    _gather_kernel[grid](src, dst, n, BLOCK=64, num_warps=4)
    return dst
'''


def classifier(store, loads):
    def read_blob(sha):
        loads.append(sha)
        return SOURCE
    context = SimpleNamespace(upstream="aiter", symbol_tables=SymbolTableCache(), read_blob=read_blob,
                              signatures=store)
    return SymbolClassifier(context, index=None)


def signatures_of(store, loads):
    found = classifier(store, loads)
    return [found._upstream_signature("b1", PATH, name, None) for name in ("_gather_kernel", "gather")]


def test_a_later_scan_reads_the_signatures_instead_of_parsing_and_gets_the_same_ones(tmp_path):
    loads = []
    first = SignatureStore(tmp_path / "d.sqlite", signature_rules)
    computed = signatures_of(first, loads)
    first.close()
    assert loads == ["b1"] and computed[1].launches and computed[1].params
    second = SignatureStore(tmp_path / "d.sqlite", signature_rules)
    stored = signatures_of(second, loads)
    second.close()
    assert loads == ["b1"] and second.recalled == 2  # nothing read or parsed the second time
    assert stored == computed == signatures_of(None, [])


def test_signatures_of_other_rules_are_never_read_and_are_dropped_at_the_next_write(tmp_path):
    path = tmp_path / "d.sqlite"
    current = SignatureStore(path, signature_rules)  # the store holds rows of today's rules too
    current.put("b2", PATH, "other", -1, json.dumps(Signature("other", "other", "function", "python").to_json()))
    current.close()
    stub = json.dumps(Signature("gather", "gather", "function", "python").to_json())
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO signatures VALUES ('b1', ?, 'gather', -1, '0.0+older', ?)", (PATH, stub))
    loads = []
    store = SignatureStore(path, signature_rules)
    _, gather = signatures_of(store, loads)
    store.close()
    assert loads == ["b1"] and store.recalled == 0 and gather.launches  # computed, not the stored stub
    rows = sqlite3.connect(path).execute("SELECT blob, rules FROM signatures ORDER BY blob").fetchall()
    assert sorted({rules for _, rules in rows}) == [signature_rules()] and len(rows) == 3


def test_a_damaged_row_is_computed_again(tmp_path):
    path = tmp_path / "d.sqlite"
    store = SignatureStore(path, signature_rules)
    store.put("b1", PATH, "gather", -1, '{"name": "gather", "unexpected": 1')
    store.put("b1", PATH, "_gather_kernel", -1, '{"name": "k", "not_a_field": 1}')
    store.close()
    loads = []
    again = SignatureStore(path, signature_rules)
    assert signatures_of(again, loads) == signatures_of(None, []) and loads == ["b1"]
    again.close()


@pytest.mark.parametrize("make", [
    lambda path: path.write_bytes(b"this is not a database, only text" * 40),
    lambda path: path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200),
    lambda path: sqlite3.connect(path).execute("CREATE TABLE signatures (blob TEXT, what TEXT)"),
], ids=["text", "damaged", "foreign-table"])
def test_an_unusable_store_is_rebuilt_never_read(tmp_path, make):
    path = tmp_path / "d.sqlite"
    make(path)
    store = SignatureStore(path, signature_rules)
    computed = signatures_of(store, [])
    store.close()
    assert "d.sqlite" in store.replaced and store.problem is None
    loads = []
    again = SignatureStore(path, signature_rules)
    assert signatures_of(again, loads) == computed and loads == [] and again.recalled == 2
    again.close()


def test_a_store_that_cannot_be_opened_is_set_aside_and_signatures_are_computed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    store = SignatureStore(blocker / "cache" / "d.sqlite", signature_rules)
    assert signatures_of(store, []) == signatures_of(None, [])
    store.close()
    assert "cannot open" in store.problem


def test_rules_name_the_portq_version_and_the_signature_code():
    from portq import __version__

    version, digest = signature_rules().split("+")
    assert version == __version__ and len(digest) == 16
