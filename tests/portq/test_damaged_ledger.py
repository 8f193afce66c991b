"""A damaged ledger is an input problem (one line, exit 2) for every command that reads it."""
from __future__ import annotations

import random
import sqlite3

import pytest

from tests.portq.golden.reports.scenario import scanned

READERS = (("status",), ("show", "1"), ("summary",), ("file-issue", "1"), ("summary", "--html", "page.html"))


def _damage(ledger, how: str) -> None:
    if how == "dropped-table":
        with sqlite3.connect(ledger) as db:
            db.execute("PRAGMA foreign_keys = OFF")
            db.execute("DROP TABLE wave_entries")
    elif how == "random-bytes":
        data = bytearray(ledger.read_bytes())
        noise = random.Random(27).randbytes(4096)
        page = data.find(b"gather_and_maybe_dequant_cache", 4096) // 4096 * 4096  # a page the readers use
        assert page > 0
        data[page:page + 4096] = noise
        ledger.write_bytes(bytes(data))
    elif how == "unparsable-json":
        with sqlite3.connect(ledger) as db:
            db.execute("DROP TRIGGER verdict_events_no_update")  # the damage bypasses portq's guard
            db.execute("UPDATE texts SET text = '{\"verdict\": ' ")
            db.execute("UPDATE verdict_events SET evidence = '[{' WHERE evidence != ''")
    elif how == "unknown-verdict":
        with sqlite3.connect(ledger) as db:
            db.execute("DROP TRIGGER verdict_events_no_update")
            db.execute("UPDATE verdict_events SET verdict = 'PROBABLY_FINE'")
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["dropped-table", "random-bytes", "unparsable-json", "unknown-verdict"])
@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_a_damaged_ledger_is_one_line_and_exit_2(tmp_path, how, command):
    scenario = scanned(tmp_path)
    ledger = tmp_path / "ledger.sqlite"
    with sqlite3.connect(ledger) as db:  # one file, as a copy or a CI cache would hold it
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _damage(ledger, how)
    result = scenario.portq(*command)
    lines = result.err.strip().splitlines()
    assert result.code == 2, (result.code, result.err)
    assert len(lines) == 1 and lines[0].startswith("portq: error:"), result.err
    assert "internal error" not in result.err and "PROBABLY_FINE" not in result.out
