"""A ported host whose whole change is calling helpers by the new names one commit gives them, where the
renamed helpers call each other by their new names too and one restates its arithmetic through locals it
binds once and reads once, in order (``renamed-helper-restated``): each renamed helper runs the same code as
before, so the host's change is cosmetic. A restatement that moves a call past another call, a local read
twice, or a helper in the chain whose value changes stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from portq.classifier.rules.renamed_helpers import renamed_functions
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops.py"
HELPERS = "pkg/helpers.py"
MATRIX = """\
[[row]]
id       = "OPS"
title    = "A host that calls a helper module"
upstream = "vllm"
paths    = ["pkg/ops.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

OPS = '''\
from pkg import helpers


def launch(x, n):
    tile = helpers.get_tile(n, x.element_size())
    warps = helpers.get_warps(n, x.element_size(), 4)
    return x.run(tile, warps)
'''
HELPERS_BEFORE = '''\
def clamp(v, lo, hi):
    return max(lo, min(v, hi))


def get_budget():
    return 64 * 1024


def get_tile(n, size):
    return min(n, get_budget() // size)


def get_warps(n, size, corr=1):
    warps = get_budget() // (get_tile(n, size) * size)
    return clamp(warps * corr, 4, 32)
'''
HELPERS_AFTER = '''\
def clamp(v, lo, hi):
    return max(lo, min(v, hi))


def budget():
    return 64 * 1024


def tile(n, size):
    return min(n, budget() // size)


def warps(n, size, corr=1):
    total = budget()
    width = tile(n, size)
    nbytes = width * size
    return clamp(total // nbytes * corr, 4, 32)
'''
OPS_AFTER = OPS.replace("helpers.get_tile(", "helpers.tile(").replace("helpers.get_warps(", "helpers.warps(")

# Unsound neighbours.
HELPERS_REORDERED = HELPERS_AFTER.replace("    total = budget()\n    width = tile(n, size)\n",
                                          "    width = tile(n, size)\n    total = budget()\n")
HELPERS_READ_TWICE = HELPERS_AFTER.replace("return clamp(total // nbytes * corr, 4, 32)",
                                           "return clamp(total // nbytes * corr, 4, 32 + nbytes - nbytes)")
HELPERS_CHAIN_CHANGED = HELPERS_AFTER.replace("return 64 * 1024", "return 32 * 1024")


def _entry(tmp_path, helpers_after, ops_after=OPS_AFTER):
    tree = {"vendored/ops.py": OPS.replace("\ndef launch(", f"\n# portq: ports vllm:{HOST}::launch\ndef launch("),
            "engine/use.py": "from vendored.ops import launch\n\n\ndef run(x):\n    return launch(x, 8)\n"}
    return classify_commit(tmp_path, {HOST: OPS, HELPERS: HELPERS_BEFORE}, {HOST: ops_after, HELPERS: helpers_after},
                           tree, matrix=MATRIX, message="rename helpers")


def test_the_helpers_pair_through_each_others_renames_and_single_use_locals():
    pairs = renamed_functions(HELPERS_BEFORE.encode(), HELPERS_AFTER.encode(), restated=True)
    assert pairs == {"get_budget": "budget", "get_tile": "tile", "get_warps": "warps"}, pairs
    assert renamed_functions(HELPERS_BEFORE.encode(), HELPERS_AFTER.encode()) == {"get_budget": "budget"}


def test_a_host_calling_a_chain_of_renamed_restated_helpers_is_cosmetic(tmp_path):
    verdict = _entry(tmp_path, HELPERS_AFTER)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert verdict.justification == "cosmetic", verdict.justification
    launch = next(s for s in verdict.symbols if s.symbol == "launch")
    assert "renamed-helper-restated" in launch.rules, launch.rules
    assert "get_warps → warps" in launch.reason, launch.reason


def test_a_restatement_that_moves_a_call_past_another_is_still_flagged(tmp_path):
    assert "get_warps" not in renamed_functions(HELPERS_BEFORE.encode(), HELPERS_REORDERED.encode(), restated=True)
    verdict = _entry(tmp_path, HELPERS_REORDERED)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_local_read_twice_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, HELPERS_READ_TWICE)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_helper_of_the_chain_whose_value_changes_is_still_flagged(tmp_path):
    assert renamed_functions(HELPERS_BEFORE.encode(), HELPERS_CHAIN_CHANGED.encode(), restated=True) == {}
    verdict = _entry(tmp_path, HELPERS_CHAIN_CHANGED)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_another_change_beside_the_calls_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, HELPERS_AFTER, OPS_AFTER.replace("x.run(tile, warps)", "x.run(tile, warps, 2)"))
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_local_read_as_a_later_dict_key_is_not_written_past_an_earlier_value():
    before = "def get_table(n):\n    return {1: get_size(n), n: 2}\n\n\ndef get_size(n):\n    return n\n"
    after = ("def table(n):\n    key = n\n    return {1: size(n), key: 2}\n\n\ndef size(n):\n    return n\n")
    assert "get_table" not in renamed_functions(before.encode(), after.encode(), restated=True)
