"""Several processes opening one new ledger or definition cache at the same instant.

SQLite answers some first-open steps (the switch to WAL, reading a schema
another process is writing) with BUSY at once; these tests start the openers
behind a barrier, many rounds over, and require every one of them to get the
file, and a lock held past the busy timeout to be reported as a lock.
"""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from portq.core.errors import LedgerError
from portq.ledger import store as ledger_module
from portq.ledger.store import open_ledger
from portq.tree import symbol_cache
from portq.tree.symbol_cache import DefinitionCache

OPENERS = 6
ROUNDS = 10


def _open_cache(path, barrier, results):
    barrier.wait()
    cache = DefinitionCache(path)
    cache.get(f"blob-{multiprocessing.current_process().pid}", "m.py", lambda: b"def f():\n    pass\n")
    cache.close()
    results.put(cache.problem or "ok")


def _open_ledger(path, barrier, results):
    barrier.wait()
    try:
        open_ledger(path).close()
    except LedgerError as error:
        results.put(str(error))
    else:
        results.put("ok")


def _open_at_once(opener, path):
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(OPENERS), context.Queue()
    processes = [context.Process(target=opener, args=(path, barrier, results)) for _ in range(OPENERS)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=120)
    return outcomes


@pytest.mark.parametrize("opener", [_open_cache, _open_ledger], ids=["definition-cache", "ledger"])
def test_many_processes_opening_one_new_file_at_once_all_get_it(tmp_path, opener):
    for round_number in range(ROUNDS):
        path = tmp_path / f"round{round_number}" / "store.sqlite"
        path.parent.mkdir()
        assert _open_at_once(opener, path) == ["ok"] * OPENERS


def test_definitions_written_by_concurrent_first_openers_are_all_kept(tmp_path):
    path = tmp_path / "d.sqlite"
    assert _open_at_once(_open_cache, path) == ["ok"] * OPENERS
    blobs = {row[0] for row in sqlite3.connect(path).execute("SELECT blob FROM definitions")}
    assert len(blobs) == OPENERS


@pytest.fixture
def file_held_exclusively(tmp_path):
    """A new SQLite file another connection holds an exclusive lock on."""
    path = tmp_path / "held.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    yield path
    holder.execute("ROLLBACK")
    holder.close()


def test_a_ledger_locked_past_the_busy_timeout_is_reported_as_locked_not_foreign(file_held_exclusively, monkeypatch):
    monkeypatch.setattr(ledger_module, "BUSY_TIMEOUT_S", 0.2)
    with pytest.raises(LedgerError) as raised:
        open_ledger(file_held_exclusively)
    assert "locked by another portq process" in str(raised.value)
    assert "not a portq ledger" not in str(raised.value)


def test_a_cache_locked_past_the_busy_timeout_is_set_aside_saying_so(file_held_exclusively, monkeypatch):
    monkeypatch.setattr(symbol_cache, "BUSY_TIMEOUT_S", 0.2)
    cache = DefinitionCache(file_held_exclusively)
    assert not cache.persistent
    assert "locked by another process" in cache.problem
