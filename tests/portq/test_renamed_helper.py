"""A ported definition whose whole change is calling a module-level helper by the new name this same
commit gives it (``def to_kind(kind)`` becoming ``def kind(inp)``, its body the same once its parameters
are named by position), in a file no row owns (``renamed-helper``): the call runs the same code, so
cosmetic. A helper whose body also changes, a ported definition that changes anything else, or an old
name the commit keeps stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
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


def scale(x, factor):
    kind = helpers.to_kind(x.dtype)
    return x.to(kind) * factor
'''
HELPERS_BEFORE = '''\
import torch


def to_kind(kind):
    if kind == torch.float16:
        return torch.float32
    return kind


def unrelated(a):
    return a
'''
HELPERS_AFTER = HELPERS_BEFORE.replace(
    "def to_kind(kind):\n    if kind == torch.float16:\n        return torch.float32\n    return kind\n",
    "def kind(inp):\n    if inp == torch.float16:\n        return torch.float32\n    return inp\n")
OPS_AFTER = OPS.replace("helpers.to_kind(", "helpers.kind(")

# Unsound neighbours.
HELPERS_CHANGED = HELPERS_AFTER.replace("return torch.float32", "return torch.bfloat16")
OPS_ALSO_CHANGED = OPS_AFTER.replace("* factor", "* factor * 2")
HELPERS_KEPT = HELPERS_AFTER + "\n\ndef to_kind(kind):\n    return kind\n"


def _entry(tmp_path, helpers_after, ops_after):
    tree = {"vendored/ops.py": OPS.replace("\ndef scale(", f"\n# portq: ports vllm:{HOST}::scale\ndef scale("),
            "engine/use.py": "from vendored.ops import scale\n\n\ndef run(x):\n    return scale(x, 2.0)\n"}
    return classify_commit(tmp_path, {HOST: OPS, HELPERS: HELPERS_BEFORE}, {HOST: ops_after, HELPERS: helpers_after},
                           tree, matrix=MATRIX, message="rename helper")


def test_a_call_of_a_helper_renamed_with_the_same_body_is_cosmetic(tmp_path):
    verdict = _entry(tmp_path, HELPERS_AFTER, OPS_AFTER)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert verdict.justification == "cosmetic", verdict.justification
    scale = next(s for s in verdict.symbols if s.symbol == "scale")
    assert "renamed-helper" in scale.rules, scale.rules
    assert "to_kind → kind" in scale.reason, scale.reason


def test_a_helper_whose_body_changes_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, HELPERS_CHANGED, OPS_AFTER)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_another_change_beside_the_call_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, HELPERS_AFTER, OPS_ALSO_CHANGED)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_an_old_name_the_commit_keeps_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, HELPERS_KEPT, OPS_AFTER)
    assert verdict.verdict in FLAGGED, verdict.reason
