"""Path rules give one answer to every caller (portq.core.paths)."""
from __future__ import annotations

import pytest

from portq.core.paths import is_test_file, is_test_path, non_code_kind
from portq.tree.reachability import is_test_path as reachability_is_test_path


@pytest.mark.parametrize("path", ["conftest.py", "kernels/conftest.py", "tests/kernels/conftest.py"])
def test_conftest_is_a_test_file_for_the_classifier_and_for_reachability(path):
    assert is_test_file(path) and is_test_path(path) and reachability_is_test_path(path)
    assert non_code_kind(path) == "tests"


@pytest.mark.parametrize("path, kind", [
    ("benchmarks/bench_x.py", "benchmarks"),
    ("benchmark/run.py", "benchmarks"),
    ("kernels/kv_cache/gather.py", None),
    ("csrc/cache_kernels_test.cu", "tests"),
])
def test_benchmarks_and_tests_agree_across_the_rules(path, kind):
    assert non_code_kind(path) == kind
    assert is_test_path(path) == (kind in ("tests", "benchmarks"))
