"""A Python helper (no kernel) that gains a parameter only upstream's own callers bind, each from a constant or
a value it computes itself (``computed-internal-parameter``), while the tree calls the port's helper, outside
tests, only from definitions that port upstream ones: no input of an entry point the engine calls changes, so
the parameter is how the copied code is wired inside, for a reader (NEEDS_REVIEW). Neighbours keep the gap: an
entry point gaining the parameter, a caller handing on a parameter of its own, a new option no caller binds,
a caller outside the row's files binding it, and engine code calling the helper (under another name too); a
forwarder that already took the parameter has its callers read in every upstream file at the new side."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "PLAN"
title    = "Tile planning and hosts"
upstream = "vllm"
paths    = ["lib/plan.py", "lib/host.py"]
tree     = ["pkg/", "engine/"]
tests    = ["tests/"]
"""

PLAN_OLD = '''\
def plan(m: int, n: int, grouped: bool = False):
    size = 128 if grouped else 64
    return size, (m + size - 1) // size, n
'''

PLAN_NEW = '''\
def plan(m: int, n: int, grouped: bool = False, masked: bool = False):
    size = 128 if grouped else 64
    split = 2 if masked else 1
    return size, (m + size - 1) // size, n // split
'''

HOST_OLD = '''\
from .plan import plan


def run(x, out):
    size, blocks, n = plan(x.shape[0], x.shape[1])
    launch(x, out, size, blocks, n)


def run_masked(x, out, counts):
    size, blocks, n = plan(x.shape[0], x.shape[1])
    launch(x, out, size, blocks, n)
'''

HOST_CONSTANT = HOST_OLD.replace(
    "def run_masked(x, out, counts):\n    size, blocks, n = plan(x.shape[0], x.shape[1])",
    "def run_masked(x, out, counts):\n    size, blocks, n = plan(x.shape[0], x.shape[1], masked=True)")

HOST_COMPUTED = HOST_OLD.replace(
    "def run_masked(x, out, counts):\n    size, blocks, n = plan(x.shape[0], x.shape[1])",
    "def run_masked(x, out, counts):\n    uneven = counts.max() > x.shape[0] // 2\n"
    "    size, blocks, n = plan(x.shape[0], x.shape[1], masked=uneven)")

HOST_FORWARDS = HOST_OLD.replace(
    "def run(x, out):\n    size, blocks, n = plan(x.shape[0], x.shape[1])",
    "def run(x, out, masked=False):\n    size, blocks, n = plan(x.shape[0], x.shape[1], masked=masked)")

HOST_ENTRY = HOST_OLD.replace(
    "def run(x, out):\n    size, blocks, n = plan(x.shape[0], x.shape[1])",
    "def run(x, out, masked=False):\n    size, blocks, n = plan(x.shape[0], x.shape[1])\n    out = out[:, ::2] if masked else out")

MODEL_OLD = '''\
from .plan import plan


def layer(x, out):
    return plan(x.shape[0], x.shape[1])
'''

MODEL_NEW = '''\
from .plan import plan


def layer(x, out):
    return plan(x.shape[0], x.shape[1], masked=True)
'''


def _tree(engine: str = "from pkg.host import run\n\n\ndef forward(x, out):\n    run(x, out)\n") -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/plan.py": "# portq: ports vllm:lib/plan.py::plan\n" + PLAN_OLD,
        "pkg/host.py": "from .plan import plan\n\n\n"
                       "# portq: ports vllm:lib/host.py::run\n"
                       "def run(x, out):\n"
                       "    size, blocks, n = plan(x.shape[0], x.shape[1])\n"
                       "    launch(x, out, size, blocks, n)\n",
        "engine/__init__.py": "",
        "engine/layer.py": engine,
        "tests/test_plan.py": "from pkg.plan import plan\n\n\ndef test_plan():\n"
                              "    assert plan(1, 2, True, False) is not None\n",
    }


def _history(host_new: str, plan_new: str = PLAN_NEW, extra_old=None, extra_new=None):
    old = {"lib/plan.py": PLAN_OLD, "lib/host.py": HOST_OLD, **(extra_old or {})}
    new = {"lib/plan.py": plan_new, "lib/host.py": host_new, **(extra_new or {})}
    return [CommitSpec("base", files=old), CommitSpec("change", files=new)]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_parameter_an_internal_caller_binds_to_a_constant_is_for_a_reader(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(HOST_CONSTANT), _tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert plan.verdict == NEEDS_REVIEW, plan.reason
    assert "computed-internal-parameter" in plan.rules, plan.rules
    assert verdicts[1].verdict != REAL_GAP, verdicts[1].reason


def test_a_parameter_an_internal_caller_computes_itself_is_for_a_reader(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(HOST_COMPUTED), _tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert plan.verdict == NEEDS_REVIEW, plan.reason
    assert "computed-internal-parameter" in plan.rules, plan.rules


def test_a_caller_handing_on_its_own_parameter_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(HOST_FORWARDS), _tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason
    assert verdicts[1].verdict == REAL_GAP


def test_an_entry_point_gaining_the_parameter_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(HOST_ENTRY, plan_new=PLAN_OLD), _tree(), matrix=MATRIX)
    run = _symbol(verdicts[1], "run")
    assert "computed-internal-parameter" not in run.rules
    assert verdicts[1].verdict == REAL_GAP, verdicts[1].reason


def test_a_new_option_no_caller_binds_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(HOST_OLD), _tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_a_caller_outside_the_row_binding_it_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history(HOST_CONSTANT, extra_old={"lib/model.py": MODEL_OLD},
                                                      extra_new={"lib/model.py": MODEL_NEW}), _tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_engine_code_calling_the_helper_keeps_the_gap(tmp_path):
    engine = "from pkg.plan import plan\n\n\ndef forward(x, out):\n    return plan(x.shape[0], x.shape[1])\n"
    verdicts, _ = classify_history(tmp_path, _history(HOST_CONSTANT), _tree(engine), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_engine_code_calling_the_helper_under_another_name_keeps_the_gap(tmp_path):
    engine = "from pkg.plan import plan as tiles\n\n\ndef forward(x, out):\n    return tiles(x.shape[0], x.shape[1])\n"
    verdicts, _ = classify_history(tmp_path, _history(HOST_CONSTANT), _tree(engine), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_a_caller_handing_on_its_own_parameter_through_a_local_keeps_the_gap(tmp_path):
    host = HOST_OLD.replace(
        "def run(x, out):\n    size, blocks, n = plan(x.shape[0], x.shape[1])",
        "def run(x, out, masked=False):\n    chosen = masked\n    size, blocks, n = plan(x.shape[0], x.shape[1], masked=chosen)")
    verdicts, _ = classify_history(tmp_path, _history(host), _tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_a_closure_handing_on_its_outer_function_parameter_keeps_the_gap(tmp_path):
    host = HOST_OLD.replace(
        "def run(x, out):\n    size, blocks, n = plan(x.shape[0], x.shape[1])",
        "def run(x, out, masked=False):\n    def tiles():\n        return plan(x.shape[0], x.shape[1], masked=masked)\n"
        "    size, blocks, n = tiles()")
    verdicts, _ = classify_history(tmp_path, _history(host), _tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


# A helper whose new parameter another helper forwards: the forwarder gains the same parameter in the same
# commit and hands it on as it is; the chain must end at callers of the row binding constants or values they
# compute, and every port on it must be called only from ports.

CHAIN_MATRIX = MATRIX.replace('paths    = ["lib/plan.py", "lib/host.py"]',
                              'paths    = ["lib/plan.py", "lib/host.py", "lib/masked.py"]')

CHAIN_OLD = '''\
def plan(m: int, n: int, grouped: bool = False):
    size = 128 if grouped else 64
    return size, (m + size - 1) // size, n


def tiles(m: int, n: int, grouped: bool = False):
    return plan(m, n, grouped)
'''

CHAIN_NEW = '''\
def plan(m: int, n: int, grouped: bool = False, masked: bool = False):
    size = 128 if grouped else 64
    split = 2 if masked else 1
    return size, (m + size - 1) // size, n // split


def tiles(m: int, n: int, grouped: bool = False, masked: bool = False):
    return plan(m, n, grouped, masked=masked)
'''

CHAIN_HOST_OLD = '''\
from .plan import tiles


def run(x, out):
    size, blocks, n = tiles(x.shape[0], x.shape[1])
    launch(x, out, size, blocks, n)


def run_masked(x, out, counts):
    size, blocks, n = tiles(x.shape[0], x.shape[1])
    launch(x, out, size, blocks, n)
'''

CHAIN_HOST_CONSTANT = CHAIN_HOST_OLD.replace(
    "def run_masked(x, out, counts):\n    size, blocks, n = tiles(x.shape[0], x.shape[1])",
    "def run_masked(x, out, counts):\n    size, blocks, n = tiles(x.shape[0], x.shape[1], masked=True)")

CHAIN_HOST_ENTRY = CHAIN_HOST_OLD.replace(
    "def run(x, out):\n    size, blocks, n = tiles(x.shape[0], x.shape[1])",
    "def run(x, out, masked=False):\n    size, blocks, n = tiles(x.shape[0], x.shape[1], masked=masked)")


def _chain_tree(engine: str = "from pkg.host import run\n\n\ndef forward(x, out):\n    run(x, out)\n") -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/plan.py": "# portq: ports vllm:lib/plan.py::plan\n" + CHAIN_OLD.replace(
            "def tiles", "# portq: ports vllm:lib/plan.py::tiles\ndef tiles"),
        "pkg/host.py": "from .plan import tiles\n\n\n"
                       "# portq: ports vllm:lib/host.py::run\n"
                       "def run(x, out):\n"
                       "    size, blocks, n = tiles(x.shape[0], x.shape[1])\n"
                       "    launch(x, out, size, blocks, n)\n",
        "engine/__init__.py": "",
        "engine/layer.py": engine,
    }


def _chain_history(host_new: str, plan_old: str = CHAIN_OLD, plan_new: str = CHAIN_NEW, unchanged=None):
    # ``unchanged``: files both sides hold as they are (the commit leaves them alone)
    return [CommitSpec("base", files={"lib/plan.py": plan_old, "lib/host.py": CHAIN_HOST_OLD, **(unchanged or {})}),
            CommitSpec("change", files={"lib/plan.py": plan_new, "lib/host.py": host_new, **(unchanged or {})})]


def test_a_parameter_a_helper_forwards_from_its_own_internal_callers_is_for_a_reader(tmp_path):
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_CONSTANT), _chain_tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert plan.verdict == NEEDS_REVIEW, plan.reason
    assert "computed-internal-parameter" in plan.rules, plan.rules
    assert verdicts[1].verdict != REAL_GAP, verdicts[1].reason


def test_a_forwarded_parameter_an_entry_point_hands_on_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_ENTRY), _chain_tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason
    assert verdicts[1].verdict == REAL_GAP


# The forwarder already took the parameter before the commit: callers in files the commit leaves alone may
# bind it, so every upstream file at the new side is read for them, and the chain must end there as well.
TILES_TOOK_IT = CHAIN_OLD.replace("def tiles(m: int, n: int, grouped: bool = False):",
                                  "def tiles(m: int, n: int, grouped: bool = False, masked: bool = False):")

UNCHANGED_ROW_CONSTANT = {"lib/masked.py": "from .plan import tiles\n\n\ndef run_sparse(x, out):\n"
                                           "    return tiles(x.shape[0], x.shape[1], masked=True)\n"}
UNCHANGED_ROW_HANDS_ON = {"lib/masked.py": "from .plan import tiles\n\n\ndef run_sparse(x, out, masked):\n"
                                           "    return tiles(x.shape[0], x.shape[1], masked=masked)\n"}
UNCHANGED_OUTSIDE_CONSTANT = {"lib/model.py": "from .plan import tiles\n\n\ndef layer(x, out):\n"
                                              "    return tiles(x.shape[0], x.shape[1], masked=True)\n"}


def test_a_parameter_a_forwarder_already_took_bound_only_inside_the_row_is_for_a_reader(tmp_path):
    # every caller of the forwarder, in the files the commit changes and in those it leaves alone, binds the
    # parameter to a constant in the row's files or leaves it unbound
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_CONSTANT, plan_old=TILES_TOOK_IT,
                                                            unchanged=UNCHANGED_ROW_CONSTANT),
                                   _chain_tree(), matrix=CHAIN_MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert plan.verdict == NEEDS_REVIEW, plan.reason
    assert "computed-internal-parameter" in plan.rules, plan.rules
    assert verdicts[1].verdict != REAL_GAP, verdicts[1].reason


def test_a_forwarder_whose_parameter_is_not_new_keeps_the_gap_when_an_unchanged_file_outside_the_row_binds_it(
        tmp_path):
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_CONSTANT, plan_old=TILES_TOOK_IT,
                                                            unchanged=UNCHANGED_OUTSIDE_CONSTANT),
                                   _chain_tree(), matrix=CHAIN_MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_a_forwarder_whose_parameter_is_not_new_keeps_the_gap_when_an_unchanged_caller_hands_on_its_own(tmp_path):
    # an unchanged caller of the row handing on a parameter it takes: an input of an entry point
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_CONSTANT, plan_old=TILES_TOOK_IT,
                                                            unchanged=UNCHANGED_ROW_HANDS_ON),
                                   _chain_tree(), matrix=CHAIN_MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_a_forwarder_whose_parameter_is_not_new_keeps_the_gap_when_an_entry_point_hands_it_on(tmp_path):
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_ENTRY, plan_old=TILES_TOOK_IT),
                                   _chain_tree(), matrix=CHAIN_MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_engine_code_calling_the_forwarder_keeps_the_gap(tmp_path):
    engine = "from pkg.plan import tiles\n\n\ndef forward(x, out):\n    return tiles(x.shape[0], x.shape[1])\n"
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_CONSTANT), _chain_tree(engine), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def test_a_forwarder_rebinding_the_parameter_keeps_the_gap(tmp_path):
    new = CHAIN_NEW.replace("    return plan(m, n, grouped, masked=masked)",
                            "    masked = masked or grouped\n    return plan(m, n, grouped, masked=masked)")
    verdicts, _ = classify_history(tmp_path, _chain_history(CHAIN_HOST_CONSTANT, plan_new=new),
                                   _chain_tree(), matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason


def _tree_with_run_body(body: str) -> dict[str, str]:
    tree = _tree()
    tree["pkg/host.py"] = tree["pkg/host.py"].replace(
        "def run(x, out):\n", "def run(x, out):\n" + body)
    return tree


def test_a_docstring_naming_the_helper_is_no_use_of_it(tmp_path):
    tree = _tree_with_run_body('    """(size, blocks, n) from plan, then a launch."""\n')
    verdicts, _ = classify_history(tmp_path, _history(HOST_CONSTANT), tree, matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert plan.verdict == NEEDS_REVIEW, plan.reason
    assert "computed-internal-parameter" in plan.rules, plan.rules


def test_a_string_naming_the_helper_outside_a_docstring_keeps_the_gap(tmp_path):
    tree = _tree_with_run_body('    chosen = globals()["plan"]\n')
    verdicts, _ = classify_history(tmp_path, _history(HOST_CONSTANT), tree, matrix=MATRIX)
    plan = _symbol(verdicts[1], "plan")
    assert "computed-internal-parameter" not in plan.rules
    assert plan.verdict == REAL_GAP, plan.reason
