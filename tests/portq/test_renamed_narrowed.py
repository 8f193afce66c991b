"""A ported definition that one commit renames under a kindred name (one word of its name dropped, added or
shortened: ``mix_v2_op`` -> ``mix_op``) while narrowing its interface (parameters dropped, none new: the
per-matrix scales a caller passed now travel inside the handles it already passes) is followed by identity to
the one such definition of its file whose body is mostly the old body's lines (rule ``renamed-narrowed``): the
move is shown, the move commit stays flagged as it was, and a later change to the definition under its new
name is the port's, never a silent not-ported. A renamed definition under an unrelated name, one that takes a
new input in place of an old one (a replacement), and two kindred candidates are not followed."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "MIX"
title    = "Fused gate/up mix"
upstream = "vllm"
paths    = ["src/*.cpp", "src/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

OLD = """\
#include "common.h"

void mix_v2_op(const float *x, float *out, const float *gate, const float *gate_scales, const int *gate_map,
               const float *up, const float *up_scales, const int *up_map, int n) {
    check_inputs(x, out);
    check_quant(gate, gate_scales, gate_map);
    check_quant(up, up_scales, up_map);
    int gate_groups = groups_of(gate, gate_scales);
    int up_groups = groups_of(up, up_scales);
    int rows = n / 4;
    int cols = 4;
    int device = device_of(x);
    guard_device(device);
    prepare_out(out, rows);
    launch_gate(x, gate, gate_scales, gate_map, gate_groups, rows);
    launch_up(x, up, up_scales, up_map, up_groups, rows);
    combine(out, rows, cols);
    finish(out, device);
}
"""

# renamed (the version word dropped), the scales and maps now inside the gate/up handles
NARROWED = """\
#include "common.h"

void mix_op(const float *x, float *out, const float *gate, const float *up, int n) {
    check_inputs(x, out);
    int rows = n / 4;
    int cols = 4;
    int device = device_of(x);
    guard_device(device);
    prepare_out(out, rows);
    launch_handle(x, gate, rows);
    combine(out, rows, cols);
    finish(out, device);
}
"""

TREE = {
    "kernels/mix.py": """\
import torch


# portq: ports vllm:src/mix.cpp::mix_v2_op
def mix(x, gate, gate_scales, gate_map, up, up_scales, up_map):
    g = x @ (gate * gate_scales[gate_map])
    u = x @ (up * up_scales[up_map])
    return torch.nn.functional.silu(g) * u
""",
    "engine/run.py": "from kernels.mix import mix\n\n\ndef step(x, p):\n    return mix(x, *p)\n",
}


def _fixed(source: str) -> str:
    return source.replace("    combine(out, rows, cols);\n", "    combine(out, rows, cols, 1);\n")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol.split("::")[-1] == name)


def test_a_definition_renamed_under_a_kindred_name_with_a_narrowed_interface_is_followed(tmp_path):
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"src/mix.cpp": OLD}),
        CommitSpec("handles", files={"src/mix.cpp": NARROWED}),
        CommitSpec("fix the mix", files={"src/mix.cpp": _fixed(NARROWED)}),
    ], TREE, matrix=MATRIX)
    old = _symbol(verdicts[1], "mix_v2_op")
    assert old.verdict in FLAGGED and "renamed-narrowed" in old.rules, (old.rules, old.reason)
    line = f"anchor lost at {shas[1][:10]}: mix_v2_op moved to src/mix.cpp::mix_op?"
    assert line in [e.message for e in old.evidence if e.kind == "anchor-lost"], old.evidence
    later = _symbol(verdicts[2], "mix_op")
    assert later.verdict in FLAGGED, (later.verdict, later.justification, later.reason)
    assert "moved-definition" in later.rules and "renamed-narrowed" in later.rules, later.rules


PY_OLD = """\
import torch
from mix_ext import fused_mix


def run_mix_v2(x, norm_weight, eps, gate, up, down, hidden_size):
    outshape = x.shape
    x = x.view(-1, x.shape[-1])
    out = torch.empty_like(x)
    fused_mix(x,
              out,
              norm_weight,
              eps,
              gate["qweight"],
              gate["scales"],
              gate["zeros"],
              up["qweight"],
              up["scales"],
              up["zeros"],
              down["qweight"],
              down["scales"],
              down["zeros"])
    return out.view(outshape)
"""

# renamed (the version word dropped); hidden_size, which the body never read, is gone; the handles are passed whole
PY_NARROWED = """\
import torch
from mix_ext import fused_mix


def run_mix(x, norm_weight, eps, gate, up, down):
    outshape = x.shape
    x = x.view(-1, x.shape[-1])
    out = torch.empty_like(x)
    fused_mix(x,
              out,
              norm_weight,
              eps,
              gate,
              up,
              down)
    return out.view(outshape)
"""

PY_TREE = {
    "kernels/mix.py": """\
import torch


# portq: ports vllm:src/mix.py::run_mix_v2
def run_mix(x, norm_weight, eps, gate, up, down, hidden_size):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), norm_weight, eps)
""",
    "engine/run.py": "from kernels.mix import run_mix\n\n\ndef step(x, p):\n    return run_mix(x, *p)\n",
}


def test_a_wrapper_renamed_that_drops_a_parameter_and_passes_handles_whole_is_followed(tmp_path):
    inplace = PY_NARROWED.replace("    out = torch.empty_like(x)\n", "").replace("              out,\n", "              x,\n") \
        .replace("    return out.view(outshape)\n", "    return x.view(outshape)\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/mix.py": PY_OLD}),
        CommitSpec("handles", files={"src/mix.py": PY_NARROWED}),
        CommitSpec("in place", files={"src/mix.py": inplace}),
    ], PY_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "run_mix")
    assert later.verdict in FLAGGED, (later.verdict, later.justification, later.reason)
    assert "moved-definition" in later.rules and "renamed-narrowed" in later.rules, later.rules


def test_a_narrowed_definition_under_an_unrelated_name_is_not_followed(tmp_path):
    other = NARROWED.replace("mix_op", "blend_rows")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/mix.cpp": OLD}),
        CommitSpec("handles", files={"src/mix.cpp": other}),
        CommitSpec("fix the mix", files={"src/mix.cpp": _fixed(other)}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "blend_rows")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason


def test_a_kindred_definition_that_takes_a_new_input_is_a_replacement(tmp_path):
    replaced = NARROWED.replace("const float *up, int n)", "const float *up, const int *positions, int n)") \
        .replace("launch_handle(x, gate, rows);", "launch_handle(x, gate, positions, rows);")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/mix.cpp": OLD}),
        CommitSpec("handles", files={"src/mix.cpp": replaced}),
        CommitSpec("fix the mix", files={"src/mix.cpp": _fixed(replaced)}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "mix_op")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason


def test_two_kindred_narrowed_definitions_are_followed_to_neither(tmp_path):
    both = NARROWED + "\n" + NARROWED.split('#include "common.h"\n\n')[1].replace("mix_op", "mix_v2")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/mix.cpp": OLD}),
        CommitSpec("handles", files={"src/mix.cpp": both}),
        CommitSpec("fix the mix", files={"src/mix.cpp": _fixed(both)}),
    ], TREE, matrix=MATRIX)
    for name in ("mix_op", "mix_v2"):
        later = _symbol(verdicts[2], name)
        assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", (name, later.reason)
