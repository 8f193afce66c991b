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
