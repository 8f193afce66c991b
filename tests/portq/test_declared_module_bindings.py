"""A module-level binding the tree declares ``not-carried`` (rule ``declared-binding``): a commit whose
changed module-level lines all lie in statements binding only names the tree declares out of scope
(one more entry in an autotuning table the port replaced by one fixed tile) changes nothing the port
carries: NOT_APPLICABLE/not-carried, even though a ported definition upstream reads the table. The same
change with no declaration, or one that also touches a binding the port does not declare, stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

SOURCE = "vllm/_custom_ops.py"
BEFORE = '''\
import triton

SCALE = 2.0

CONFIGS = [
    triton.Config({"BLOCK": 64}, num_warps=4),
]


def pick_block(n):
    return min(c.kwargs["BLOCK"] for c in CONFIGS if c.kwargs["BLOCK"] <= n) * SCALE
'''
ONE_MORE = BEFORE.replace('    triton.Config({"BLOCK": 64}, num_warps=4),\n',
                          '    triton.Config({"BLOCK": 64}, num_warps=4),\n'
                          '    triton.Config({"BLOCK": 128}, num_warps=8),\n')
DECLARED = {"kernels/kv_cache/block.py": (
    f"# portq: ports vllm:{SOURCE}::pick_block\n"
    f"# portq: not-carried vllm:{SOURCE}::CONFIGS -- one fixed block, no autotuning\n"
    "def block_for(n):\n    return 64 * 2.0\n")}
UNDECLARED = {"kernels/kv_cache/block.py": DECLARED["kernels/kv_cache/block.py"].replace(
    f"# portq: not-carried vllm:{SOURCE}::CONFIGS -- one fixed block, no autotuning\n", "")}


def test_an_entry_added_to_a_declared_module_table_is_not_carried(tmp_path):
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: ONE_MORE}, DECLARED)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-carried"), entry.reason
    assert "declared-binding" in entry.rules, entry.rules


def test_the_same_entry_without_a_declaration_is_still_flagged(tmp_path):
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: ONE_MORE}, UNDECLARED)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules


def test_a_change_that_also_touches_an_undeclared_binding_is_still_flagged(tmp_path):
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: ONE_MORE.replace("SCALE = 2.0", "SCALE = 4.0")},
                            DECLARED)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules


def test_a_statement_binding_a_declared_and_an_undeclared_name_is_still_flagged(tmp_path):
    before = BEFORE.replace("SCALE = 2.0", "SCALE, LIMIT = 2.0, 8")
    entry = classify_commit(tmp_path, {SOURCE: before}, {SOURCE: before.replace("SCALE, LIMIT = 2.0, 8",
                                                                                "SCALE, LIMIT = 2.0, 16")},
                            DECLARED)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
