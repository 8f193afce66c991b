"""Support added for an architecture the definition refused before
(docs/tricky-cases.md, "a host function gains an arm for a new GPU
architecture"): ``refused-architecture``.

A C/C++ definition that, before the change, refused an architecture (an
``if`` arm testing for it alone that only reports or traps, or an
unconditional check demanding other architectures) never ran there: a port in
sync with it has no path on that architecture. Two sides the same once every
test for it is read as false (its arms left out, ``a || T`` read as ``a``)
and check messages erased changed only what that architecture runs:
NOT_APPLICABLE/not-carried. A change in the arm the port runs, an arm that
already did work before, or a check that now lets another path through stays
flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

HOST = "csrc/host/dispatch.cpp"

BEFORE = '''#include "arch.h"

int plan_splits(const DeviceProps* props, int sms, int heads, bool sparse) {
    const Arch arch = read_arch(props);
    int splits = 0;
    if (arch.is_sm90()) {
        splits = sms / heads;
    } else if (arch.is_sm100()) {
        LIB_CHECK(false, "unsupported architecture");
    } else {
        LIB_CHECK(false, "unsupported architecture");
    }
    return splits;
}

void run_prefill(const DeviceProps* props, Params& p) {
    bool is_sm90 = props->major == 9;
    LIB_CHECK(is_sm90, "prefill is only supported on sm90");
    p.scale = 1.0f;
    if (is_sm90) {
        launch_sm90(p);
    } else {
        LIB_CHECK(false, "unknown architecture");
    }
}
'''

AFTER = '''#include "arch.h"

int plan_splits(const DeviceProps* props, int sms, int heads, bool sparse) {
    const Arch arch = read_arch(props);
    int splits = 0;
    if (arch.is_sm90()) {
        splits = sms / heads;
    } else if (arch.is_sm100()) {
        if (sparse) {
            splits = sms / (2 * heads);
        } else {
            LIB_CHECK(false, "dense plans are not supported on sm100");
        }
    } else {
        LIB_CHECK(false, "unsupported architecture");
    }
    return splits;
}

void run_prefill(const DeviceProps* props, Params& p) {
    bool is_sm90 = props->major == 9;
    bool is_sm100 = props->major == 10;
    LIB_CHECK(is_sm90 || is_sm100, "prefill is only supported on sm90 or sm100");
    p.scale = 1.0f;
    if (is_sm90) {
        launch_sm90(p);
    } else if (is_sm100) {
        launch_sm100(p);
    } else {
        LIB_CHECK(false, "unknown architecture");
    }
}
'''

PORT = '''"""Host planning, re-implemented."""


# portq: ports vllm:csrc/host/dispatch.cpp::plan_splits
def plan_splits(props, sms, heads, sparse):
    return sms // heads


# portq: ports vllm:csrc/host/dispatch.cpp::run_prefill
def run_prefill(props, p):
    p.scale = 1.0
    launch(p)
'''

ENGINE = "from .plan import plan_splits, run_prefill\n\n\ndef step(p):\n    return run_prefill(None, p)\n"


def _scan(tmp_path, after, before=BEFORE):
    tree = {"kernels/host/plan.py": PORT, "kernels/host/engine.py": ENGINE}
    return classify_commit(tmp_path, {HOST: before}, {HOST: after}, tree, message="support the new architecture")


def test_support_for_a_refused_architecture_is_not_carried(tmp_path):
    verdict = _scan(tmp_path, AFTER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "refused-architecture" in verdict.rules, verdict.rules


def test_only_the_arm_refused_before_is_set_aside(tmp_path):
    verdict = _scan(tmp_path, AFTER.split("void run_prefill")[0] + "void run_prefill" + BEFORE.split("void run_prefill")[1])
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "refused-architecture" in verdict.rules, verdict.rules


def test_a_change_in_the_arm_the_port_runs_is_flagged(tmp_path):
    verdict = _scan(tmp_path, AFTER.replace("splits = sms / heads;", "splits = sms / heads + 1;"))
    assert verdict.justification != "not-carried", verdict.reason
    assert "refused-architecture" not in verdict.rules


def test_an_arm_that_did_work_before_is_flagged(tmp_path):
    before = BEFORE.replace('''    } else if (arch.is_sm100()) {
        LIB_CHECK(false, "unsupported architecture");''', '''    } else if (arch.is_sm100()) {
        splits = sms / (4 * heads);''')
    verdict = _scan(tmp_path, AFTER, before)
    assert verdict.justification != "not-carried", verdict.reason
    assert "refused-architecture" not in verdict.rules


def test_a_check_that_now_lets_every_architecture_through_is_flagged(tmp_path):
    after = AFTER.replace('LIB_CHECK(is_sm90 || is_sm100, "prefill is only supported on sm90 or sm100");',
                          'LIB_CHECK(true, "prefill runs anywhere");')
    verdict = _scan(tmp_path, after)
    assert verdict.justification != "not-carried", verdict.reason
    assert "refused-architecture" not in verdict.rules


def test_a_change_beside_the_tests_on_the_common_path_is_flagged(tmp_path):
    verdict = _scan(tmp_path, AFTER.replace("p.scale = 1.0f;", "p.scale = 0.5f;"))
    assert verdict.justification != "not-carried", verdict.reason
    assert "refused-architecture" not in verdict.rules
