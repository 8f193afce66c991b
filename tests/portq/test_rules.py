"""Classifier rules as named units: every verdict names the rules that decided it, and the ledger and JSON keep them."""

from __future__ import annotations

import importlib
import re
import sqlite3
from pathlib import Path

import pytest

from portq.classifier.rules import RULES, checked
from portq.core.model import VERDICTS
from portq.ledger.store import MIGRATIONS, SCHEMA_VERSION
from tests.portq.golden.reports.scenario import scanned

CLASSIFIER = Path(__file__).resolve().parents[2] / "portq" / "classifier"


def test_every_rule_is_stated_with_an_id_its_verdicts_and_an_example():
    for rule in RULES.values():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.id), rule.id
        assert rule.gives and set(rule.gives) <= set(VERDICTS), rule.id
        assert rule.statement.endswith(".") and rule.example and rule.where, rule.id
    for module in sorted((CLASSIFIER / "rules").glob("*.py")):
        assert importlib.import_module(f"portq.classifier.rules.{module.stem}" if module.stem != "__init__"
                                       else "portq.classifier.rules").__doc__, module


def test_every_stated_rule_is_applied_somewhere_in_the_classifier():
    # a rule's code may live beside its statement in rules/: its id must appear outside the statement
    code = "\n".join(re.sub(r'Rule\("[a-z-]+"', "Rule(", p.read_text())
                     for p in [*CLASSIFIER.glob("*.py"), *(CLASSIFIER / "rules").glob("*.py")])
    assert [rule for rule in RULES if f'"{rule}"' not in code] == []


def _defined(dotted: str) -> bool:
    """Whether ``portq.<dotted>`` names a module, or a class, function or method where it is defined (not
    where it is imported or inherited)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(["portq", *parts[:cut]]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        where = getattr(found, "__module__", None), getattr(found, "__qualname__", None)
        return None in where or ".".join(where) == f"portq.{dotted}"
    return False


def test_every_rule_names_code_that_exists_where_it_says():
    for rule in RULES.values():
        owner = ""
        for item in (part.strip() for part in rule.where.split(",")):
            dotted = owner + item if item.startswith(".") else item
            owner = dotted.rsplit(".", 1)[0]
            assert _defined(dotted), (rule.id, dotted)


def test_an_unknown_rule_id_is_refused_and_repeats_are_dropped():
    assert checked("cosmetic-ast", "cosmetic-ast", "body-change") == ("cosmetic-ast", "body-change")
    with pytest.raises(ValueError, match="no classifier rule has the id made-up"):
        checked("made-up")


def test_every_scanned_verdict_names_its_rules_in_the_json_and_the_ledger(tmp_path):
    scenario = scanned(tmp_path)
    result = scenario.portq("scan", scenario.range, "--json")
    assert result.code == 0, result.err
    entries = result.json()["entries"]
    assert entries and all(entry["rules"] and set(entry["rules"]) <= set(RULES) for entry in entries)
    db = sqlite3.connect(scenario.root / "ledger.sqlite")
    stored = db.execute("SELECT rules FROM verdict_events WHERE source = 'scan'").fetchall()
    assert stored and all(row[0] and row[0].startswith("[") for row in stored)
    shown = scenario.portq("show", "1", "--json").json()
    assert shown["rules"] == entries[0]["rules"] or shown["source"] == "review"


def test_every_json_entry_says_in_one_line_why_it_is_or_is_not_flagged(tmp_path):
    scenario = scanned(tmp_path)
    entries = scenario.portq("scan", scenario.range, "--json").json()["entries"]
    flagged = [e for e in entries if e["verdict"] in ("REAL_GAP", "NEEDS_REVIEW", "INERT")]
    assert flagged
    for entry in entries:
        assert isinstance(entry["reason"], str) and "\n" not in entry["reason"], entry
    # a flagged entry has no justification; its reason says which verdict it ruled out
    assert all(e["justification"] is None and " rather than " in e["reason"] for e in flagged)
    assert all(" rather than " in e["reason"] or e["verdict"] == "NOT_APPLICABLE" for e in entries)
    reviewed = scenario.portq("review", "1", "--verdict", "INERT", "--because", "only tests\nreach it", "--json")
    assert reviewed.code == 0, reviewed.err
    first = scenario.portq("scan", scenario.range, "--json").json()["entries"][0]
    assert first["reason"] == "only tests\\x0areach it" or first["reason"] == "only tests reach it"


def test_a_review_names_no_rule(tmp_path):
    scenario = scanned(tmp_path)
    reviewed = scenario.portq("review", "1", "--verdict", "INERT", "--because", "tests only", "--json")
    assert reviewed.code == 0, reviewed.err
    assert scenario.portq("show", "1", "--json").json()["rules"] == []


def test_the_rules_column_is_a_migration_with_its_reason():
    version, reason, _ = MIGRATIONS[-1]
    assert version == SCHEMA_VERSION == 3 and "rules" in reason
