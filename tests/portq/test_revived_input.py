"""A parameter a ported Python host accepted but never read that upstream now reads to select a path
(``revived-input``): ``layout``, dead at the base, now picks a transposed path (``if layout == "cols":``);
the port still takes ``layout`` and ignores it, so a caller passing the other layout gets a different
result from the port than from upstream: an interface the port lacks, REAL_GAP. A port that reads the
parameter, one that declares it not carried, and a revived read that only checks it (an assert, or a
branch that only raises) stay with the other rules.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

SOURCE = "vllm/v1/attention/backends/mla/ops.py"

BEFORE = '''import torch


def scaled_product(x, y, eps=0.5, layout="rows"):
    z = x * y
    return z + eps
'''
AFTER = '''import torch


def scaled_product(x, y, eps=0.5, layout="rows"):
    if layout == "cols":
        x, y = x.t(), y.t()
    z = x * y
    if layout == "cols":
        z = z.t()
    return z + eps
'''
CHECKED_ONLY = '''import torch


def scaled_product(x, y, eps=0.5, layout="rows"):
    assert layout in ("rows", "cols")
    z = x * y
    return z + eps
'''


def _port(body: str = "    return x * y + eps\n", declared: str = "") -> dict[str, str]:
    return {"kernels/mla_sparse/ops.py": (
        f"# portq: ports vllm:{SOURCE}::scaled_product\n{declared}"
        "def scaled_product_port(x, y, eps=0.5, layout=\"rows\"):\n"
        f"{body}\n\n"
        "def run(x, y):\n"
        "    return scaled_product_port(x, y)\n")}


def _scan(tmp_path, after=AFTER, port=None, before=BEFORE):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={SOURCE: before}), CommitSpec("change", files={SOURCE: after})],
        port or _port())
    entry = verdicts[1]
    return entry, {s.symbol: s for s in entry.symbols if s.path == SOURCE}


def test_a_dead_parameter_upstream_now_branches_on_is_a_gap_of_a_port_that_ignores_it(tmp_path):
    entry, symbols = _scan(tmp_path)
    host = symbols["scaled_product"]
    assert host.verdict == REAL_GAP, host.reason
    assert "revived-input" in host.rules, host.rules
    assert "layout" in host.reason, host.reason
    assert entry.verdict == REAL_GAP, entry.reason


def test_a_port_that_reads_the_parameter_is_not_a_revived_input_gap(tmp_path):
    body = "    z = x * y\n    if layout == \"cols\":\n        z = z.t()\n    return z + eps\n"
    entry, symbols = _scan(tmp_path, port=_port(body))
    host = symbols["scaled_product"]
    assert "revived-input" not in host.rules, host.rules
    assert host.verdict != REAL_GAP, host.reason


def test_a_parameter_the_port_declares_not_carried_is_not_a_gap(tmp_path):
    declared = f"# portq: not-carried vllm:{SOURCE}::scaled_product[layout] -- rows only\n"
    entry, symbols = _scan(tmp_path, port=_port(declared=declared))
    host = symbols["scaled_product"]
    assert "revived-input" not in host.rules, host.rules
    assert host.verdict != REAL_GAP, host.reason


def test_a_revived_read_that_only_checks_the_value_stays_for_a_reader(tmp_path):
    entry, symbols = _scan(tmp_path, after=CHECKED_ONLY)
    host = symbols["scaled_product"]
    assert "revived-input" not in host.rules, host.rules
    assert host.verdict == NEEDS_REVIEW, host.reason


def test_a_revived_branch_that_only_raises_stays_for_a_reader(tmp_path):
    rejects = CHECKED_ONLY.replace('    assert layout in ("rows", "cols")\n',
                                   '    if layout == "cols":\n        raise ValueError("rows only")\n')
    entry, symbols = _scan(tmp_path, after=rejects)
    host = symbols["scaled_product"]
    assert "revived-input" not in host.rules, host.rules
    assert host.verdict == NEEDS_REVIEW, host.reason
