"""A module-level import read only on a path the tree declares not carried (rule ``declared-off-read``): a
ported definition reads the imported name only inside `if NAME not in [...]:` for a name the tree declares
not carried (a ``[PARAM]`` declaration on that definition) whose every value the port's definition asserts
to be in that list. For the port the branch is never taken, so the import reaches nothing it carries:
NOT_APPLICABLE/not-carried. The name read also on the carried path, no declaration, a port that carries
the branch (a copy without the assert), or a port admitting a value the branch takes stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

SOURCE = "vllm/sparse_ops.py"
BEFORE = '''\
import torch


def sparse_attention(query, key, block=64):
    batch, heads, length, width = query.shape
    if width not in [16, 32, 64, 128, 256]:
        extra = 2 ** math.ceil(math.log2(width)) - width
        query = torch.nn.functional.pad(query, [0, extra])
        key = torch.nn.functional.pad(key, [0, extra])
    return (query * block + key)[..., :width]
'''
AFTER = BEFORE.replace("import torch\n", "import math\n\nimport torch\n")
PORT = (f"# portq: ports vllm:{SOURCE}::sparse_attention\n"
        f"# portq: not-carried vllm:{SOURCE}::sparse_attention[width] -- widths 16, 32, 64 or 128 only\n"
        "def sparse_attention(query, key, block=64):\n"
        "    batch, heads, length, width = query.shape\n"
        "    assert width in {16, 32, 64, 128}\n"
        "    return query * block + key\n")
TREE = {"kernels/attention/sparse.py": PORT}


def test_an_import_read_only_on_a_declared_off_path_is_not_carried(tmp_path):
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: AFTER}, TREE)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-carried"), entry.reason
    assert "declared-off-read" in entry.rules, entry.rules


def test_without_the_declaration_it_is_still_flagged(tmp_path):
    tree = {"kernels/attention/sparse.py": PORT.replace(
        f"# portq: not-carried vllm:{SOURCE}::sparse_attention[width] -- widths 16, 32, 64 or 128 only\n", "")}
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: AFTER}, tree)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules


def test_a_name_also_read_on_the_carried_path_is_still_flagged(tmp_path):
    before = BEFORE.replace("    return (query", "    scale = math.sqrt(width)\n    return scale * (query")
    after = before.replace("import torch\n", "import math\n\nimport torch\n")
    entry = classify_commit(tmp_path, {SOURCE: before}, {SOURCE: after}, TREE)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules


def test_a_copy_that_carries_the_branch_is_still_flagged(tmp_path):
    tree = {"kernels/attention/sparse.py": PORT.replace("    assert width in {16, 32, 64, 128}\n", "")}
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: AFTER}, tree)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules


def test_a_port_admitting_a_value_the_branch_takes_is_still_flagged(tmp_path):
    tree = {"kernels/attention/sparse.py": PORT.replace("{16, 32, 64, 128}", "{16, 32, 64, 96, 128}")}
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: AFTER}, tree)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "toplevel-use" in entry.rules, entry.rules


def test_a_name_reassigned_after_the_assert_is_still_flagged(tmp_path):
    before = BEFORE.replace("    if width not in", "    width = width * 2\n    if width not in")
    after = before.replace("import torch\n", "import math\n\nimport torch\n")
    entry = classify_commit(tmp_path, {SOURCE: before}, {SOURCE: after}, TREE)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
