"""Callers of in-tree ports, split into test and non-test callers."""
from __future__ import annotations

import pytest

from portq.tree.reachability import is_test_path
from portq.tree.tree_index import TreeIndex

TREE = {
    "kernels/kv/gather.py": '''\
import triton


# portq: ports vllm:a.cu::gather_kernel
@triton.jit
def _gather_kernel(x_ptr):
    pass


# portq: ports vllm:a.cu::gather
def gather(x):
    _gather_kernel[(1,)](x)
''',
    "kernels/prefill/chunks.py": '''\
from portq_kernels.kv import gather as ops


def plan(x):
    return ops.gather(x)
''',
    "tests/kernels/test_gather.py": "from portq_kernels.kv.gather import gather\n\n\ndef test_it():\n    gather(1)\n",
    "csrc/engine.cpp": "void Run(int x) {\n  vt::gather(x);\n}\n",
    "benchmarks/bench_gather.py": "def bench():\n    gather(2)\n",
}


@pytest.mark.parametrize("path, expected", [
    ("tests/kernels/test_a.py", True), ("kernels/test_a.py", True), ("src/a_test.cc", True),
    ("kernels/conftest.py", True), ("benchmarks/bench.py", True), ("kernels/kv/gather.py", False),
    ("kernels/contest.py", False),
])
def test_test_paths_by_location(path, expected):
    assert is_test_path(path) is expected


def test_attribute_and_cpp_calls_are_non_test_callers_with_quotes():
    callers = TreeIndex.from_sources(TREE).reachability.callers("gather", "kernels/kv/gather.py", "gather")
    cites = {(c.cite, c.quote) for c in callers.non_test}
    assert ("kernels/prefill/chunks.py:5", "return ops.gather(x)") in cites
    assert ("csrc/engine.cpp:2", "vt::gather(x);") in cites
    assert {c.cite for c in callers.test} == {"tests/kernels/test_gather.py:5", "benchmarks/bench_gather.py:2"}


def test_kernel_launched_by_a_ported_wrapper_is_reached_through_it():
    callers = TreeIndex.from_sources(TREE).reachability.callers("_gather_kernel", "kernels/kv/gather.py", "_gather_kernel")
    assert callers.through == ["kernels/kv/gather.py:11 gather"]
    assert "kernels/prefill/chunks.py:5" in {c.cite for c in callers.non_test}


def test_port_with_only_test_callers_has_no_non_test_caller():
    tree = {k: v for k, v in TREE.items() if not k.startswith(("kernels/prefill", "csrc"))}
    callers = TreeIndex.from_sources(tree).reachability.callers("_gather_kernel", "kernels/kv/gather.py", "_gather_kernel")
    assert callers.non_test == [] and callers.test


def test_a_non_port_helper_only_tests_call_is_still_a_non_test_caller():
    tree = {**TREE, "kernels/prefill/chunks.py": "def helper(x):\n    return gather(x)\n"}
    tree.pop("csrc/engine.cpp")
    callers = TreeIndex.from_sources(tree).reachability.callers("gather", "kernels/kv/gather.py", "gather")
    assert [c.cite for c in callers.non_test] == ["kernels/prefill/chunks.py:2"]


CHAIN_TREE = {
    **TREE,
    "kernels/prefill/chunks.py": '''\
from portq_kernels.kv import gather as ops


def plan(x):
    return ops.gather(x)


def build_context(x):
    return plan(x)
''',
    "models/deepseek.py": "from kernels.prefill.chunks import build_context\n\n\nclass Attention:\n    def forward(self, x):\n        return build_context(x)\n",
    "models/kimi.py": "from kernels.kv.gather import gather\n\n\ndef run(x):\n    y = gather(x)\n    return y\n",
    "models/minicpm.py": "from kernels.prefill.chunks import build_context\n\nCONTEXT = build_context(0)\n",
}


def chains_of(tree, name="_gather_kernel", qualified=None):
    reach = TreeIndex.from_sources(tree).reachability
    return reach.caller_chains(name, "kernels/kv/gather.py", qualified or name)


def test_every_non_test_chain_runs_up_to_an_entry_point_named_by_its_enclosing_definitions():
    found = chains_of(CHAIN_TREE)
    hops = sorted([[(s.cite, s.caller) for s in chain] for chain in found.chains])
    wrapper = ("kernels/kv/gather.py:12", "gather")
    assert [wrapper, ("csrc/engine.cpp:2", "Run")] in hops
    assert [wrapper, ("kernels/prefill/chunks.py:5", "plan"), ("kernels/prefill/chunks.py:9", "build_context"),
            ("models/deepseek.py:6", "Attention.forward")] in hops
    assert [wrapper, ("kernels/prefill/chunks.py:5", "plan"), ("kernels/prefill/chunks.py:9", "build_context"),
            ("models/minicpm.py:3", None)] in hops
    assert [wrapper, ("models/kimi.py:5", "run")] in hops
    assert len(hops) == 4 and not found.truncated


def test_test_callers_along_the_chains_are_counted_separately():
    found = chains_of(CHAIN_TREE)
    assert {s.cite for s in found.test} == {"tests/kernels/test_gather.py:5", "benchmarks/bench_gather.py:2"}
    assert all(not is_test_path(s.file) for chain in found.chains for s in chain)


def test_a_call_cycle_ends_the_chain_instead_of_looping():
    tree = {
        "kernels/kv/gather.py": "# portq: ports vllm:a.cu::gather\ndef gather(x):\n    return ping(x)\n",
        "kernels/loop.py": "def ping(x):\n    return pong(x)\n\n\ndef pong(x):\n    return ping(x)\n",
    }
    reach = TreeIndex.from_sources(tree).reachability
    found = reach.caller_chains("ping", "kernels/loop.py", "ping")
    assert sorted([s.caller for s in chain] for chain in found.chains) == [["gather"], ["pong"]]


# How a caller imports or invokes a port must not decide REAL_GAP against INERT
# (rule reach-bound-names): every form below reaches the kernel from engine code.

KERNEL_PACKAGE = {
    "kernels/chunked/__init__.py": "from .chunk import chunk_fwd as chunk\n",
    "kernels/chunked/chunk_o.py": '''\
import triton


# portq: ports up:ops/chunk_o.py::chunk_o_kernel
@triton.jit
def chunk_o_kernel(x_ptr):
    pass
''',
    "kernels/chunked/chunk.py": '''\
from .chunk_o import chunk_o_kernel as _o
from ..shared.util import pick


# portq: ports up:ops/chunk.py::chunk_fwd
def chunk_fwd(x):
    _o[(pick(x),)](x)
''',
    "kernels/shared/util.py": '''\
# portq: ports up:ops/util.py::pick
def pick(x):
    return 1
''',
    "tests/test_chunk.py": "from kernels.chunked.chunk import chunk_fwd\n\n\ndef test_it():\n    chunk_fwd(1)\n",
}


def _non_test(tree, name, file, qualified=None):
    callers = TreeIndex.from_sources(tree).reachability.callers(name, file, qualified or name)
    return {c.cite for c in callers.non_test}


@pytest.mark.parametrize("engine, where", [
    ("import kernels.chunked as ops\n\n\ndef run(x):\n    return ops.chunk(x)\n", "engine/run.py:5"),
    ("from kernels.chunked import chunk as go\n\n\ndef run(x):\n    return go(x)\n", "engine/run.py:5"),
    ("from kernels.chunked import chunk\n\n\ndef run(x):\n    return chunk(x)\n", "engine/run.py:5"),
    ("from kernels import chunked\n\n\ndef run(x):\n    return chunked.chunk(x)\n", "engine/run.py:5"),
], ids=["module-attribute-of-reexport", "aliased-reexport", "reexport", "package-attribute"])
def test_a_package_reexport_under_another_name_reaches_the_kernel(engine, where):
    tree = {**KERNEL_PACKAGE, "engine/run.py": engine}
    assert where in _non_test(tree, "chunk_o_kernel", "kernels/chunked/chunk_o.py")


def test_a_launch_through_a_relative_import_alias_reaches_the_kernel():
    tree = {**KERNEL_PACKAGE, "engine/run.py": "from kernels.chunked.chunk import chunk_fwd\n\n\ndef run(x):\n    chunk_fwd(x)\n"}
    callers = TreeIndex.from_sources(tree).reachability.callers(
        "chunk_o_kernel", "kernels/chunked/chunk_o.py", "chunk_o_kernel")
    assert callers.through == ["kernels/chunked/chunk.py:6 chunk_fwd"]
    assert {c.cite for c in callers.non_test} == {"engine/run.py:5"}


def test_a_helper_imported_from_a_parent_package_is_reached_through_the_port_that_calls_it():
    tree = {**KERNEL_PACKAGE, "engine/run.py": "from kernels.chunked import chunk\n\n\ndef run(x):\n    chunk(x)\n"}
    assert _non_test(tree, "pick", "kernels/shared/util.py") == {"engine/run.py:5"}


def test_an_aliased_import_of_a_kernel_launched_under_its_alias_is_a_caller():
    tree = {**KERNEL_PACKAGE,
            "engine/run.py": "from kernels.chunked.chunk_o import chunk_o_kernel as _k\n\n\ndef run(x):\n    _k[(1,)](x)\n"}
    assert _non_test(tree, "chunk_o_kernel", "kernels/chunked/chunk_o.py") == {"engine/run.py:5"}


AUTOGRAD_TREE = {
    "kernels/norm.py": '''\
import torch
import triton


# portq: ports up:ops/norm.py::_norm_kernel
@triton.jit
def _norm_kernel(x_ptr):
    pass


class NormFunction(torch.autograd.Function):
    # portq: ports up:ops/norm.py::NormFunction.forward
    @staticmethod
    def forward(ctx, x):
        _norm_kernel[(1,)](x)
        return x

    # portq: ports up:ops/norm.py::NormFunction.backward
    @staticmethod
    def backward(ctx, dy):
        return dy


class Norm(torch.nn.Module):
    # portq: ports up:ops/norm.py::Norm.forward
    def forward(self, x):
        return NormFunction.apply(x)
''',
    "tests/test_norm.py": "from kernels.norm import Norm\n\n\ndef test_it():\n    Norm()(1)\n",
}


@pytest.mark.parametrize("engine", [
    "from kernels import norm\n\n\ndef run(x):\n    return norm.NormFunction.apply(x)\n",
    "from kernels.norm import NormFunction\n\nnorm = NormFunction.apply\n\n\ndef run(x):\n    return norm(x)\n",
    "from kernels.norm import Norm as FinalNorm\n\n\nclass Head:\n    def __init__(self):\n        self.norm = FinalNorm()\n\n"
    "    def __call__(self, x):\n        return self.norm(x)\n",
], ids=["function-apply", "apply-alias", "module-instance"])
def test_forward_and_backward_are_reached_through_apply_and_module_calls(engine):
    tree = {**AUTOGRAD_TREE, "engine/run.py": engine}
    for name, qualified in [("_norm_kernel", "_norm_kernel"), ("forward", "NormFunction.forward"),
                            ("backward", "NormFunction.backward")]:
        found = _non_test(tree, name, "kernels/norm.py", qualified)
        assert found and all(cite.startswith("engine/run.py:") for cite in found), (name, found)


def test_a_class_only_tests_build_leaves_its_forward_test_reached():
    callers = TreeIndex.from_sources(AUTOGRAD_TREE).reachability.callers("forward", "kernels/norm.py", "Norm.forward")
    assert callers.non_test == [] and {c.cite for c in callers.test} == {"tests/test_norm.py:5"}


def test_a_chain_of_more_ported_hops_than_four_still_reaches_the_engine():
    layers = ["".join(f"# portq: ports up:ops/deep.py::f{i}\ndef f{i}(x):\n    return f{i + 1}(x)\n\n\n" for i in range(7))]
    tree = {"kernels/deep.py": layers[0] + "# portq: ports up:ops/deep.py::f7\ndef f7(x):\n    return x\n",
            "engine/run.py": "from kernels.deep import f0\n\n\ndef run(x):\n    return f0(x)\n"}
    assert _non_test(tree, "f7", "kernels/deep.py") == {"engine/run.py:5"}


def test_chains_and_tested_reach_follow_the_same_forms():
    tree = {**AUTOGRAD_TREE,
            "engine/run.py": "from kernels.norm import NormFunction as NF\n\nnorm = NF.apply\n\n\ndef go(x):\n    return norm(x)\n"}
    reach = TreeIndex.from_sources(tree).reachability
    chains = reach.caller_chains("forward", "kernels/norm.py", "NormFunction.forward")
    assert sorted([(s.cite, s.caller) for s in chain] for chain in chains.chains) == [
        [("engine/run.py:7", "go")], [("kernels/norm.py:27", "Norm.forward")]]
    assert {s.cite for s in reach.reached_by_tests("forward", "kernels/norm.py", "Norm.forward")} == {"tests/test_norm.py:5"}


def test_a_cuda_kernel_launched_through_its_address_is_reached_from_its_launcher():
    tree = {
        "csrc/attn/launch.cuh": '''\
// portq: ports up:src/fwd.h::fwd_kernel
template <typename T, bool Causal>
__global__ void fwd_kernel(Params params) {
    compute<T, Causal>(params);
}

// portq: ports up:src/fwd.h::run_fwd
template <typename T>
void run_fwd(Params &params, cudaStream_t stream) {
    auto kernel = &fwd_kernel<T, true>;
    kernel<<<grid, 128, 0, stream>>>(params);
}
''',
        "csrc/engine.cu": "#include \"attn/launch.cuh\"\n\nvoid attend(Params &p, cudaStream_t s) {\n    run_fwd<half>(p, s);\n}\n",
    }
    callers = TreeIndex.from_sources(tree).reachability.callers("fwd_kernel", "csrc/attn/launch.cuh", "fwd_kernel")
    assert callers.through == ["csrc/attn/launch.cuh:8 run_fwd"]
    assert {c.cite for c in callers.non_test} == {"csrc/engine.cu:4"}


# A host bound as a class attribute (``forward = host`` or
# ``forward = staticmethod(host)`` in a class body) is reached wherever that
# attribute is called on anything (``op.forward(x)``, the class picked by a
# conditional), as a method of that name is; a bound method handed to a call
# (``timed(k.forward, args)``) is a reference to it; and an instance method
# bound in a method to an implicit one (``self.forward = self.forward_picked``)
# runs wherever the class is built or called. Every form reaches the kernel.

HOST_CLASS_TREE = {
    "kernels/ops/__init__.py": "from .mv import MatVec\n\n__all__ = ['MatVec']\n",
    "kernels/ops/mv.py": '''\
import triton


# portq: ports up:ops/mv.py::mv_kernel
@triton.jit
def mv_kernel(x_ptr):
    pass


# portq: ports up:ops/mv.py::mv_forward
def mv_forward(x):
    mv_kernel[(1,)](x)
    return x


# portq: ports up:ops/mv.py::MatVec
class MatVec:
    kernel = mv_kernel
    forward = {binding}
    kind = "MV"
''',
    "tests/test_mv.py": "from kernels.ops.mv import mv_forward\n\n\ndef test_it():\n    mv_forward(1)\n",
}


@pytest.mark.parametrize("binding", ["mv_forward", "staticmethod(mv_forward)"], ids=["plain", "staticmethod"])
@pytest.mark.parametrize("engine", [
    "from kernels.ops import MatVec\n\n\ndef run(x):\n    return MatVec.forward(x)\n",
    "from kernels.ops import MatVec as MV\n\n\ndef run(x, big):\n    op = MV if big else None\n    return op.forward(x)\n",
    "from kernels.ops import *\n\n\ndef run(x):\n    return MatVec.forward(x)\n",
], ids=["class-attribute", "conditional-alias", "star-import"])
def test_a_host_bound_as_a_class_attribute_is_reached_through_that_attribute(binding, engine):
    tree = {**HOST_CLASS_TREE, "kernels/ops/mv.py": HOST_CLASS_TREE["kernels/ops/mv.py"].format(binding=binding),
            "engine/run.py": engine}
    for name in ("mv_kernel", "mv_forward"):
        found = _non_test(tree, name, "kernels/ops/mv.py")
        assert found and all(cite.startswith("engine/run.py:") for cite in found), (name, found)


def test_a_host_bound_as_a_class_attribute_nobody_calls_stays_test_reached():
    tree = {**HOST_CLASS_TREE, "kernels/ops/mv.py": HOST_CLASS_TREE["kernels/ops/mv.py"].format(binding="mv_forward"),
            "engine/run.py": "from kernels.ops import MatVec\n\n\ndef run(x):\n    return MatVec.kind\n"}
    assert _non_test(tree, "mv_kernel", "kernels/ops/mv.py") == set()
    assert _non_test(tree, "mv_forward", "kernels/ops/mv.py") == set()


LAYER_TREE = {
    **{k: v for k, v in HOST_CLASS_TREE.items() if k != "tests/test_mv.py"},
    "kernels/ops/layer.py": '''\
import torch

from .mv import MatVec


def timed(fn, args):
    return fn(*args)


class Layer(torch.nn.Module):
    # portq: ports up:ops/layer.py::Layer.__init__
    def __init__(self):
        super().__init__()
        self.kernels = [MatVec]
        self.{slot} = self.forward_picked

    # portq: ports up:ops/layer.py::Layer.pick
    def pick(self, x):
        return [timed(k.forward, (x,)) for k in self.kernels]

    # portq: ports up:ops/layer.py::Layer.forward_picked
    def forward_picked(self, x):
        return self.pick(x)
''',
}


def test_an_implicit_method_bound_in_the_constructor_reaches_through_a_bound_method_reference():
    tree = {**LAYER_TREE, "kernels/ops/mv.py": LAYER_TREE["kernels/ops/mv.py"].format(binding="staticmethod(mv_forward)"),
            "kernels/ops/layer.py": LAYER_TREE["kernels/ops/layer.py"].format(slot="forward"),
            "engine/run.py": "from kernels.ops.layer import Layer\n\n\ndef build():\n    return Layer()\n"}
    assert _non_test(tree, "forward_picked", "kernels/ops/layer.py", "Layer.forward_picked") == {"engine/run.py:5"}
    assert _non_test(tree, "mv_kernel", "kernels/ops/mv.py") == {"engine/run.py:5"}


def test_a_method_bound_to_another_attribute_is_not_run_by_building_the_class():
    tree = {**LAYER_TREE, "kernels/ops/mv.py": LAYER_TREE["kernels/ops/mv.py"].format(binding="staticmethod(mv_forward)"),
            "kernels/ops/layer.py": LAYER_TREE["kernels/ops/layer.py"].format(slot="fallback"),
            "engine/run.py": "from kernels.ops.layer import Layer\n\n\ndef build():\n    return Layer()\n"}
    assert _non_test(tree, "forward_picked", "kernels/ops/layer.py", "Layer.forward_picked") == set()
    assert _non_test(tree, "mv_kernel", "kernels/ops/mv.py") == set()
