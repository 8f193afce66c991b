"""A CUDA kernel that gains a runtime parameter which only upstream's own launchers pass, each launcher
updated in the same commit with its own parameters unchanged (``copied-launcher-parameter``): in the tree
the port's kernel is launched only from copies of those launchers, in the port's own file (here explicit
specialisations ``template <> void launch<float>(...)``, which no anchor can name). The value comes from
what the launchers already receive, so nothing the engine calls changes its interface: the change is how
the copied code is wired inside, for a reader (NEEDS_REVIEW), never REAL_GAP. Engine code launching the
kernel itself, a launcher that gains the parameter as an input of its own, or a tree launcher upstream
does not have keeps the gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "SCALE"
title    = "Row scaling"
upstream = "vllm"
paths    = ["kernels/*.cu"]
tree     = ["csrc/"]
tests    = ["tests/"]
"""

KERNEL = '''\
template <typename T>
__global__ void scale_rows(T *out, const T *inp, float alpha{param}) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
{guard}  out[i] = inp[i] * (T)alpha;
}}
'''

LAUNCHER = '''\
template <>
void launch_scale<{t}>({t} *out, const {t} *inp, float alpha, int rows,
                       int width, {own}cudaStream_t stream) {{
  scale_rows<{t}><<<rows, width, 0, stream>>>(out, inp, alpha{arg});
}}
'''


def _upstream(param: str = "", guard: str = "", own: str = "", arg: str = "") -> str:
    return (KERNEL.format(param=param, guard=guard) + "\n"
            + "\n".join(LAUNCHER.format(t=t, own=own, arg=arg) for t in ("float", "__half")))


OLD = {"kernels/scale.cu": _upstream()}
NEW = {"kernels/scale.cu": _upstream(param=", int width", guard="  if (threadIdx.x >= width) return;\n",
                                     arg=", width")}


def _tree(engine_launches: bool = False, launcher: str = "launch_scale") -> dict[str, str]:
    copy = ("// portq: ports vllm:kernels/scale.cu::scale_rows\n" + KERNEL.format(param="", guard="") + "\n"
            + "\n".join(LAUNCHER.format(t=t, own="", arg="").replace("launch_scale", launcher)
                        for t in ("float", "__half")))
    engine = ('#include "kernels.h"\n\nvoid forward(float* y, const float* x, int rows, int width, cudaStream_t s) {\n'
              + ("  scale_rows<float><<<rows, width, 0, s>>>(y, x, 2.f);\n" if engine_launches
                 else "  launch_scale<float>(y, x, 2.f, rows, width, s);\n")
              + "}\n")
    return {"csrc/third_party/scale.cu": copy, "csrc/ops.cu": engine}


def _scale(verdict):
    return next(s for s in verdict.symbols if s.symbol == "scale_rows")


def test_a_parameter_only_the_copied_launchers_pass_is_for_a_reader(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=NEW)],
                                   _tree(), matrix=MATRIX)
    scale = _scale(verdicts[1])
    assert scale.verdict == NEEDS_REVIEW, scale.reason
    assert "copied-launcher-parameter" in scale.rules, scale.rules
    assert verdicts[1].verdict != REAL_GAP, verdicts[1].reason


def test_a_new_sibling_launcher_passing_it_too_leaves_the_reading(tmp_path):
    sibling = LAUNCHER.format(t="int8_t", own="float clip, ", arg=", width").replace("launch_scale", "launch_scale_i8")
    new = {"kernels/scale.cu": NEW["kernels/scale.cu"] + "\n" + sibling}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=new)],
                                   _tree(), matrix=MATRIX)
    scale = _scale(verdicts[1])
    assert "copied-launcher-parameter" in scale.rules, scale.reason
    assert verdicts[1].verdict != REAL_GAP, verdicts[1].reason


def test_engine_code_launching_the_kernel_itself_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=NEW)],
                                   _tree(engine_launches=True), matrix=MATRIX)
    scale = _scale(verdicts[1])
    assert "copied-launcher-parameter" not in scale.rules
    assert scale.verdict == REAL_GAP, scale.reason


def test_a_launcher_that_gains_the_value_as_its_own_input_keeps_the_gap(tmp_path):
    new = {"kernels/scale.cu": _upstream(param=", int limit", guard="  if (threadIdx.x >= limit) return;\n",
                                         own="int limit, ", arg=", limit")}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=new)],
                                   _tree(), matrix=MATRIX)
    scale = _scale(verdicts[1])
    assert "copied-launcher-parameter" not in scale.rules
    assert scale.verdict == REAL_GAP, scale.reason


def test_a_tree_launcher_upstream_does_not_have_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=OLD), CommitSpec("param", files=NEW)],
                                   _tree(launcher="run_scale"), matrix=MATRIX)
    scale = _scale(verdicts[1])
    assert "copied-launcher-parameter" not in scale.rules
    assert scale.verdict == REAL_GAP, scale.reason
