"""A C++ function that gains a parameter which only upstream's own callers supply, each computing the
value itself (``internal-parameter``): every caller that existed keeps its own signature and passes a
local it declares (``Empty e = {};``), and in the tree the port's function is called only from copies
of those callers. Nothing the engine calls changes its interface, so the change is how the copied code
is wired inside, for a reader (NEEDS_REVIEW), never REAL_GAP. A caller that hands on a parameter of its
own, or engine code calling the function directly, keeps the gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "ACT"
title    = "Gated activation"
upstream = "vllm"
paths    = ["common/*.h", "common/*.cu"]
tree     = ["csrc/"]
tests    = ["tests/"]
"""

TEMPLATE = '''\
#pragma once
#include "helper.h"

template <typename Param>
void gated_act(const float* input, float* output, int n, {param}cudaStream_t stream) {{
    run_gated<Param>(input, output, n, {arg}stream);
}}
'''

API = '''\
#include "act.h"

void api_swiglu(const float* input, float* output, int n, {own}cudaStream_t stream) {{
{local}    gated_act<Empty>(input, output, n, {arg}stream);
}}
'''

OLD = {"common/act.h": TEMPLATE.format(param="", arg=""), "common/swiglu.cu": API.format(own="", local="", arg="")}
NEW = {"common/act.h": TEMPLATE.format(param="Param& p, ", arg="p, "),
       "common/swiglu.cu": API.format(own="", local="    Empty e = {};\n", arg="e, ")}


def _tree(engine_calls_gated: bool = False) -> dict[str, str]:
    engine = ('#include "third_party/swiglu.cu"\n\nvoid forward(const float* x, float* y, int n, cudaStream_t s) {\n'
              + ("    gated_act<Empty>(x, y, n, s);\n" if engine_calls_gated else "    api_swiglu(x, y, n, s);\n")
              + "}\n")
    return {
        "csrc/third_party/act.h": '#pragma once\n#include "helper.h"\n\n'
                                  "// portq: ports vllm:common/act.h::gated_act\n"
                                  "template <typename Param>\n"
                                  "void gated_act(const float* input, float* output, int n, cudaStream_t stream) {\n"
                                  "    run_gated<Param>(input, output, n, stream);\n}\n",
        "csrc/third_party/swiglu.cu": '#include "act.h"\n\n'
                                      "// portq: ports vllm:common/swiglu.cu::api_swiglu\n"
                                      "void api_swiglu(const float* input, float* output, int n, cudaStream_t stream) {\n"
                                      "    gated_act<Empty>(input, output, n, stream);\n}\n",
        "csrc/engine.cu": engine,
    }


def _gated(verdict):
    return next(s for s in verdict.symbols if s.symbol == "gated_act")


def test_a_parameter_only_the_copied_callers_supply_from_their_own_locals_is_for_a_reader(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=NEW)],
                                   _tree(), matrix=MATRIX)
    gated = _gated(verdicts[1])
    assert gated.verdict == NEEDS_REVIEW, gated.reason
    assert "internal-parameter" in gated.rules, gated.rules
    assert verdicts[1].verdict != REAL_GAP


def test_a_caller_that_hands_on_its_own_new_parameter_keeps_the_gap(tmp_path):
    new = {"common/act.h": NEW["common/act.h"],
           "common/swiglu.cu": API.format(own="Empty& e, ", local="", arg="e, ")}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=new)],
                                   _tree(), matrix=MATRIX)
    assert "internal-parameter" not in _gated(verdicts[1]).rules
    assert verdicts[1].verdict == REAL_GAP, verdicts[1].reason


def test_engine_code_calling_the_function_directly_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=NEW)],
                                   _tree(engine_calls_gated=True), matrix=MATRIX)
    gated = _gated(verdicts[1])
    assert "internal-parameter" not in gated.rules
    assert gated.verdict == REAL_GAP, gated.reason
