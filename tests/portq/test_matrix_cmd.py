"""portq matrix: rows with their ports, declarations, tests, and the problems found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from portq.reporting.reports import render
from portq.tree.matrix import Matrix
from portq.tree.matrix_problems import build_matrix_context
from portq.tree.tree_index import TreeIndex

MATRIX = """
[[row]]
id       = "ROW-A"
title    = "the a kernels"
upstream = "up"
paths    = ["src/a.cu"]
tree     = ["kernels/"]
tests    = ["tests/k/", "tests/missing/"]
"""

KERNEL = '''
# portq: ports up:src/a.cu::gather @abc1234
def gather(x):
    return x


# portq: ports up:src/a.cu::untested_op
def untested_op(x):
    return x


# portq: not-carried up:src/a.cu::sibling -- fp8 only, not used here
# portq: ports up:src/a.cu::ghost
GHOST = 1


# portq: ports up:src/other.cu::nobody_owns
def orphan(x):
    return x
'''


@pytest.fixture
def context(tmp_path: Path) -> dict:
    files = {
        "kernels/k.py": KERNEL,
        "tests/k/test_k.py": "from kernels.k import gather\n\ndef test_gather():\n    assert gather(1) == 1\n",
        "tests/stray/test_stray.py": "from kernels.k import gather\n\ndef test_again():\n    assert gather(2) == 2\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    matrix = Matrix.parse(MATRIX, "matrix.toml")
    return build_matrix_context(matrix, TreeIndex.build(tmp_path), tmp_path, "matrix.toml")


def problems(context: dict, kind: str) -> list[dict]:
    return [p for p in context["problems"] if p["kind"] == kind]


def test_row_lists_its_ports_with_file_line_and_pin(context):
    ports = {p["definition"]: p for p in context["rows"][0]["ports"]}
    assert ports["gather"]["file"] == "kernels/k.py" and ports["gather"]["definition_line"] == 3
    assert ports["gather"]["pin"] == "abc1234"
    assert ports["gather"]["test_callers"] == ["tests/k/test_k.py:4", "tests/stray/test_stray.py:4"]


def test_row_lists_not_carried_declarations(context):
    [declaration] = context["rows"][0]["not_carried"]
    assert declaration["anchor"] == "up:src/a.cu::sibling" and declaration["reason"] == "fp8 only, not used here"


def test_anchor_on_no_definition_is_a_problem(context):
    assert [p["subject"] for p in problems(context, "anchor-without-definition")] == ["up:src/a.cu::ghost"]


def test_anchor_no_row_owns_is_a_problem(context):
    assert [p["subject"] for p in problems(context, "anchor-unowned")] == ["up:src/other.cu::nobody_owns"]


def test_port_without_test_is_a_problem(context):
    assert [p["subject"] for p in problems(context, "port-without-test")] == ["untested_op"]


def test_test_calling_a_port_outside_every_row_is_unclaimed(context):
    assert [p["file"] for p in problems(context, "unclaimed-test")] == ["tests/stray/test_stray.py"]


def test_missing_tests_path_is_a_problem(context):
    assert [p["subject"] for p in problems(context, "tests-missing")] == ["tests/missing/"]


def test_matrix_page_renders_rows_and_problems(context):
    page = render("matrix.md.j2", context)
    assert "### `ROW-A`: the a kernels" in page
    assert "`kernels/k.py:3 gather`" in page
    assert "port-without-test (`ROW-A`) at `kernels/k.py:8`: `untested_op` ports `up:src/a.cu::untested_op`" in page


def test_kernel_launched_through_a_helper_is_tested_when_its_wrapper_is(tmp_path):
    """A kernel handed to a private launch helper is reached by the tests that
    call its wrapper; a benchmark calling the wrapper is not an unclaimed test."""
    (tmp_path / "matrix.toml").write_text(
        '[[row]]\nid = "ROW"\ntitle = "t"\nupstream = "up"\npaths = ["k.cu"]\n'
        'tree = ["port/"]\ntests = ["tests/"]\n'
    )
    (tmp_path / "port").mkdir()
    (tmp_path / "port" / "ops.py").write_text(
        "import triton\n\n"
        "# portq: ports up:k.cu::copy_kernel\n"
        "@triton.jit\n"
        "def copy_kernel(x, y):\n"
        "    pass\n\n\n"
        "def _launch(kernel, x, y):\n"
        "    kernel[(1,)](x, y)\n\n\n"
        "# portq: ports up:k.cu::copy\n"
        "def copy(x, y):\n"
        "    _launch(copy_kernel, x, y)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ops.py").write_text("from port.ops import copy\n\n\ndef test_copy():\n    copy(1, 2)\n")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "bench_ops.py").write_text("from port.ops import copy\n\ncopy(1, 2)\n")
    matrix = Matrix.load(tmp_path / "matrix.toml")
    index = TreeIndex.build(tmp_path, port_roots=["port/"])
    context = build_matrix_context(matrix, index, tmp_path, "matrix.toml")
    assert context["problems"] == []

    (tmp_path / "tests" / "test_ops.py").unlink()
    index = TreeIndex.build(tmp_path, port_roots=["port/"])
    context = build_matrix_context(matrix, index, tmp_path, "matrix.toml")
    untested = sorted(p["subject"] for p in context["problems"] if p["kind"] == "port-without-test")
    assert untested == ["copy", "copy_kernel"]  # a benchmark is not a test


def test_a_row_whose_upstream_has_no_clone_configured_is_a_problem(tmp_path, capsys, monkeypatch):
    from portq.cli import main

    (tmp_path / "matrix.toml").write_text(MATRIX + MATRIX.replace("ROW-A", "ROW-B").replace('"up"', '"other"'))
    (tmp_path / "portq.toml").write_text('ledger = "l/ledger.sqlite"\n[upstream.up]\npath = "up"\n')
    (tmp_path / "kernels").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["matrix", "--matrix", "matrix.toml", "--json"]) == 0
    [problem] = [p for p in json.loads(capsys.readouterr().out)["problems"] if p["kind"] == "upstream-not-configured"]
    assert (problem["row"], problem["subject"], problem["detail"]) == ("ROW-B", "other", "configured: up")
    assert main(["matrix", "--matrix", "matrix.toml"]) == 0
    assert "the row names upstream `other`, which has no clone configured (configured: up)" in capsys.readouterr().out


@pytest.mark.parametrize("comment, upstream, path", [
    ("// Ported 1:1 from up/src/a.cu:6-14 (`gather`)", "up", "src/a.cu"),
    ("// Ported from up/up/ops/x.py (`gather`)", "up", "up/ops/x.py"),
    ("// Ported 1:1 from src/a.cu:6-14 (`gather`)", "src", "a.cu"),
])
def test_the_first_component_of_a_free_form_path_names_the_upstream(tmp_path, comment, upstream, path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.cu").write_text(f"{comment}\n__global__ void gather(int* x) {{ x[0] = 1; }}\n")
    context = build_matrix_context(Matrix.parse(MATRIX, "matrix.toml"), TreeIndex.build(tmp_path), tmp_path, "matrix.toml")
    [anchor] = TreeIndex.build(tmp_path).anchors
    assert (anchor.upstream, anchor.path) == (upstream, path)
    unowned = [p["subject"] for p in problems(context, "anchor-unowned")]
    assert unowned == ([] if upstream == "up" and path == "src/a.cu" else [anchor.reference])
