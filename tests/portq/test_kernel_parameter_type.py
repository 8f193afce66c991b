"""A CUDA kernel's by-value parameter retyped from a template type parameter to a fixed floating type
(``T eps`` → ``float eps``) while the port still takes it as its own template type
(``kernel-parameter-type``): every launch of the port rounds the value to the instantiated type before the
kernel reads it, where upstream's kernel now receives it at the fixed type's precision. The launch still
compiles (the argument converts implicitly), so no parameter is missing, but the port's interface is the
old one: REAL_GAP when non-test code launches the port, INERT when only tests do. A port that already
takes the fixed type, or a retyping between two fixed types, is not this rule's."""
from __future__ import annotations

from portq.core.model import INERT, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["src/*.cu"]
tree     = ["csrc/", "tests/"]
tests    = ["tests/"]
"""

KERNEL = '''\
template <typename T>
__global__ void norm_kernel({size} n, {eps} eps, const T* x, T* y) {{
  int i = threadIdx.x;
  if (i < n)
    y[i] = x[i] * rsqrtf(float(x[i]) + {read});
}}
'''


def _upstream(eps: str, size: str = "int") -> str:
    return KERNEL.format(eps=eps, size=size, read="eps" if eps == "float" else "float(eps)")


def _tree(port_eps: str, caller: str = "csrc/ops.cu") -> dict[str, str]:
    return {"csrc/norm.cu": "// portq: ports vllm:src/norm.cu::norm_kernel\n"
                            "template <typename S>\n"
                            f"__global__ void rows_kernel(int n, {port_eps} eps, const S* x, S* y) {{\n"
                            "  int i = threadIdx.x;\n  if (i < n) y[i] = x[i] * rsqrtf(float(x[i]) + float(eps));\n}\n",
            caller: "void run(const float* x, float* y, float e) {\n"
                    "  rows_kernel<float><<<1, 32>>>(4, static_cast<float>(e), x, y);\n}\n"}


def _verdict(tmp_path, port_eps: str = "S", caller: str = "csrc/ops.cu", size: tuple[str, str] = ("int", "int"),
             eps: tuple[str, str] = ("T", "float")):
    return classify_commit(tmp_path, {"src/norm.cu": _upstream(eps[0], size[0])},
                           {"src/norm.cu": _upstream(eps[1], size[1])}, _tree(port_eps, caller), MATRIX)


def test_a_kernel_parameter_retyped_from_the_template_type_is_a_gap(tmp_path):
    entry = _verdict(tmp_path)
    assert entry.verdict == REAL_GAP, entry.reason
    assert "kernel-parameter-type" in entry.rules, entry.rules


def test_only_tests_launching_the_port_is_inert(tmp_path):
    entry = _verdict(tmp_path, caller="tests/test_norm.cu")
    assert entry.verdict == INERT, entry.reason
    assert "kernel-parameter-type" in entry.rules, entry.rules


def test_a_port_that_already_takes_the_fixed_type_is_no_gap(tmp_path):
    entry = _verdict(tmp_path, port_eps="float")
    assert "kernel-parameter-type" not in entry.rules
    assert entry.verdict != REAL_GAP, entry.reason


def test_a_retyping_between_fixed_types_is_not_this_rule(tmp_path):
    entry = _verdict(tmp_path, size=("int", "long"), eps=("T", "T"))
    assert "kernel-parameter-type" not in entry.rules
    assert entry.verdict != REAL_GAP, entry.reason
