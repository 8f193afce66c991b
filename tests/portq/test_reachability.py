"""Callers of in-tree ports, split into test and non-test callers."""
from __future__ import annotations

import pytest

from portq.reachability import is_test_path
from portq.tree_index import TreeIndex

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
