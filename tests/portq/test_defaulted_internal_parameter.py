"""A Python helper that gains a defaulted parameter which no carried caller supplies
(``defaulted-internal-parameter``): on upstream's new side every call of the helper in the files the commit
changes leaves it to its default or binds a literal constant, or lies in a caller new in the commit or one
the tree declares not carried; and in the tree the port's helper is called (outside tests) only from
definitions that port upstream ones. No input a caller of the engine's entry points supplies changes, so
the new parameter and what the body does with it are for a reader (NEEDS_REVIEW), never REAL_GAP. A
caller passing its own parameter on, or engine code calling the helper directly, keeps the gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "PLAN"
title    = "Tile planning"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["pkg/", "engine/"]
tests    = ["tests/"]
"""

PLAN_OLD = '''\
def plan(m: int, n: int, grouped: bool = False):
    block = 64 if m <= 64 else 128
    wide = 2 if n >= 1024 and not grouped else 1
    return block, wide
'''

PLAN_NEW = '''\
def plan(m: int, n: int, grouped: bool = False, masked: bool = False):
    block = 64 if m <= 64 else 128
    dense = not grouped and not masked
    wide = 2 if n >= 1024 and dense else 1
    return block, wide
'''

HOSTS = '''\
from .plan import plan


def run(x, out):
    block, wide = plan(x.shape[0], x.shape[1]{dense})
    out.copy_(x * block)


def run_grouped(x, out{own}):
    block, wide = plan(x.shape[0], x.shape[1], grouped=True)
    out.copy_(x * block)


def run_masked(x, out, mode):
    block, wide = plan(x.shape[0], x.shape[1], masked={masked})
    out.copy_(x * block)
'''

OLD = {"lib/plan.py": PLAN_OLD, "lib/hosts.py": HOSTS.format(dense="", own="", masked="False")}
NEW = {"lib/plan.py": PLAN_NEW, "lib/hosts.py": HOSTS.format(dense="", own="", masked="True")}


def _tree(engine_calls_plan: bool = False) -> dict[str, str]:
    engine = ("from pkg.hosts import run\nfrom pkg.plan import best_plan\n\n\ndef forward(x, out):\n"
              + ("    return best_plan(x.shape[0], x.shape[1])\n" if engine_calls_plan else "    run(x, out)\n"))
    return {
        "pkg/__init__.py": "",
        "pkg/plan.py": "# portq: ports vllm:lib/plan.py::plan\n"
                       "def best_plan(m: int, n: int, grouped: bool = False):\n"
                       "    block = 64 if m <= 64 else 128\n"
                       "    return block, (2 if n >= 1024 and not grouped else 1)\n",
        "pkg/hosts.py": "from .plan import best_plan\n\n"
                        "# portq: not-carried vllm:lib/hosts.py::run_masked -- the masked layout is not carried\n\n\n"
                        "# portq: ports vllm:lib/hosts.py::run\n"
                        "def run(x, out):\n"
                        "    block, wide = best_plan(x.shape[0], x.shape[1])\n"
                        "    out.copy_(x * block)\n\n\n"
                        "# portq: ports vllm:lib/hosts.py::run_grouped\n"
                        "def run_grouped(x, out):\n"
                        "    block, wide = best_plan(x.shape[0], x.shape[1], grouped=True)\n"
                        "    out.copy_(x * block)\n",
        "engine/__init__.py": "",
        "engine/layer.py": engine,
        "tests/test_plan.py": "from pkg.plan import best_plan\n\n\ndef test_plan():\n"
                              "    assert best_plan(64, 256)[0] == 64\n",
    }


def _plan(verdict):
    return next(s for s in verdict.symbols if s.symbol == "plan")


def test_a_defaulted_parameter_only_a_not_carried_caller_binds_is_for_a_reader(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=NEW)],
                                   _tree(), matrix=MATRIX)
    plan = _plan(verdicts[1])
    assert plan.verdict == NEEDS_REVIEW, plan.reason
    assert "defaulted-internal-parameter" in plan.rules, plan.rules
    assert verdicts[1].verdict != REAL_GAP, verdicts[1].reason


def test_a_carried_caller_binding_a_constant_is_for_a_reader(tmp_path):
    new = {"lib/plan.py": PLAN_NEW, "lib/hosts.py": HOSTS.format(dense=", masked=False", own="", masked="True")}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=new)],
                                   _tree(), matrix=MATRIX)
    plan = _plan(verdicts[1])
    assert plan.verdict == NEEDS_REVIEW, plan.reason
    assert "defaulted-internal-parameter" in plan.rules, plan.rules


def test_a_carried_caller_handing_on_its_own_parameter_keeps_the_gap(tmp_path):
    new = {"lib/plan.py": PLAN_NEW,
           "lib/hosts.py": HOSTS.format(dense="", own=", masked=False", masked="True")
           .replace("grouped=True)", "grouped=True, masked=masked)")}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=new)],
                                   _tree(), matrix=MATRIX)
    plan = _plan(verdicts[1])
    assert "defaulted-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_engine_code_calling_the_helper_directly_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=NEW)],
                                   _tree(engine_calls_plan=True), matrix=MATRIX)
    plan = _plan(verdicts[1])
    assert "defaulted-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason
