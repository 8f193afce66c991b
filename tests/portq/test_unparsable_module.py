"""A commit that leaves the Python module holding a ported definition unparsable (``unparsable-module``):
a changed line of the new file that Python's own parser rejects (a signature reading ``eps=-0,1``) means
the module no longer imports, so no form-only proof about the ported definition (equal tokens, a moved
definition) decides: NEEDS_REVIEW, citing the line. Where the new file parses (the same commit spelling
``eps=-0.1``), or the error is in lines the commit did not touch and fails alike before, the form-only
proof still decides.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

SOURCE = "vllm/v1/attention/backends/mla/ops.py"


def _function(name: str, eps: str = "0.5", note: str = "# scaled") -> str:
    return (f"def {name}(x, y, eps={eps}):\n"
            f"    {note}\n"
            "    z = x * y\n"
            "    return z + eps\n")


def _module(*functions: str) -> str:
    return "import math\n\n\n" + "\n\n".join(functions)


BASE = _module(_function("entry_a"), _function("entry_b"), _function("entry_c"))

PORT = {"kernels/mla_sparse/ops.py": (
    f"# portq: ports vllm:{SOURCE}::entry_a\n"
    "def entry_a_port(x, y, eps=0.5):\n"
    "    return x * y + eps\n\n\n"
    "def run(x, y):\n"
    "    return entry_a_port(x, y)\n")}


def _scan(tmp_path, after, before=BASE):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={SOURCE: before}), CommitSpec("change", files={SOURCE: after})], PORT)
    entry = verdicts[1]
    return entry, {s.symbol: s for s in entry.symbols if s.path == SOURCE}


def test_a_cosmetic_edit_beside_a_new_line_python_cannot_parse_needs_review(tmp_path):
    after = _module(_function("entry_a", note="# scaled product"), _function("entry_b"),
                    _function("entry_c", eps="-0,1"))
    entry, symbols = _scan(tmp_path, after)
    ported = symbols["entry_a"]
    assert ported.verdict == NEEDS_REVIEW, ported.reason
    assert "unparsable-module" in ported.rules, ported.rules
    assert "-0,1" in ported.reason or any("-0,1" in (e.quote or "") for e in ported.evidence), ported.reason
    assert entry.verdict == NEEDS_REVIEW, entry.reason


def test_a_moved_ported_definition_in_a_module_left_unparsable_needs_review(tmp_path):
    after = _module(_function("entry_b"), _function("entry_c", eps="-0,1"), _function("entry_a"))
    entry, symbols = _scan(tmp_path, after)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert any("unparsable-module" in s.rules for s in entry.symbols), [(s.symbol, s.rules) for s in entry.symbols]


def test_the_same_edit_where_the_new_file_parses_stays_cosmetic(tmp_path):
    after = _module(_function("entry_a", note="# scaled product"), _function("entry_b"),
                    _function("entry_c", eps="-0.1"))
    entry, symbols = _scan(tmp_path, after)
    ported = symbols["entry_a"]
    assert ported.verdict == NOT_APPLICABLE and ported.justification == "cosmetic", ported.reason
    assert "unparsable-module" not in ported.rules, ported.rules


def test_an_error_the_commit_did_not_make_leaves_the_cosmetic_proof(tmp_path):
    broken = _function("entry_c", eps="-0,1")
    before = _module(_function("entry_a"), _function("entry_b"), broken)
    after = _module(_function("entry_a", note="# scaled product"), _function("entry_b"), broken)
    entry, symbols = _scan(tmp_path, after, before)
    ported = symbols["entry_a"]
    assert "unparsable-module" not in ported.rules, ported.rules
    assert ported.verdict == NOT_APPLICABLE and ported.justification == "cosmetic", ported.reason


def test_syntax_a_newer_interpreter_reads_is_no_broken_module(tmp_path):
    newer = "def entry_c[T](x: T, y: T, eps=0.5) -> T:\n    # scaled\n    z = x * y\n    return z + eps\n"
    after = _module(_function("entry_a", note="# scaled product"), _function("entry_b"), newer)
    entry, symbols = _scan(tmp_path, after)
    ported = symbols["entry_a"]
    assert "unparsable-module" not in ported.rules, ported.rules
    assert ported.verdict == NOT_APPLICABLE and ported.justification == "cosmetic", ported.reason
