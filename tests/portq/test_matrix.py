"""Matrix loading, glob semantics and row claims."""
from __future__ import annotations

from pathlib import Path

import pytest

from portq.core.errors import MatrixError
from portq.tree.matrix import Matrix, path_matches

REPO_ROOT = Path(__file__).resolve().parents[2]

TWO_ROWS = """
[[row]]
id = "CACHE"
upstream = "up"
paths = ["csrc/cache_kernels.cu", "csrc/attention/"]
exclude = ["csrc/**/test_*"]
symbols = ["concat_and_cache"]

[[row]]
id = "SPARSE"
upstream = "up"
paths = ["vllm/**/sparse_*.py"]
symbols = ["gather_cache", "convert_*"]
"""


def test_repository_matrix_has_its_three_rows():
    matrix = Matrix.load(REPO_ROOT / "matrix" / "kernel-matrix.toml")
    assert [row.id for row in matrix.rows] == [
        "KERNEL-KV-CACHE",
        "KERNEL-ATTN-MLA-SPARSE",
        "KERNEL-ATTN-MLA-PREFIX",
    ]
    assert matrix.upstreams() == ["vllm", "aiter"]
    assert matrix.row("KERNEL-ATTN-MLA-PREFIX").tree == ("kernels/mla_prefix/",)


def test_row_records_the_line_of_its_header():
    matrix = Matrix.parse(TWO_ROWS, "m.toml")
    assert [row.line for row in matrix.rows] == [2, 9]


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("csrc/*.cu", "csrc/cache.cu", True),
        ("csrc/*.cu", "csrc/sub/cache.cu", False),
        ("csrc/**/*.cu", "csrc/cache.cu", True),
        ("csrc/**/*.cu", "csrc/a/b/cache.cu", True),
        ("csrc/", "csrc/a/b.cu", True),
        ("csrc/", "csrcx/b.cu", False),
        ("csrc/cache_kernels.cu", "csrc/cache_kernels.cu", True),
        ("csrc/cache_kernels.cu", "csrc/cache_kernels.cuh", False),
        ("csrc/cache?.h", "csrc/cache1.h", True),
        ("csrc/[ab].h", "csrc/b.h", True),
        ("csrc/[!ab].h", "csrc/b.h", False),
    ],
)
def test_glob_semantics(pattern, path, expected):
    assert path_matches(pattern, path) is expected


def test_path_claim_lists_the_row():
    matrix = Matrix.parse(TWO_ROWS)
    assert matrix.claims("up", "csrc/cache_kernels.cu", ["other"]) == ["CACHE"]


def test_exclude_is_checked_before_paths_and_symbols():
    matrix = Matrix.parse(TWO_ROWS)
    assert matrix.claims("up", "csrc/attention/test_cache.cu", ["concat_and_cache"]) == []


def test_symbol_claim_beats_path_claim_for_primary_and_both_are_listed():
    matrix = Matrix.parse(TWO_ROWS)
    assert matrix.claims("up", "csrc/cache_kernels.cu", ["gather_cache"]) == ["SPARSE", "CACHE"]


def test_symbol_claim_works_on_any_path_and_accepts_globs():
    matrix = Matrix.parse(TWO_ROWS)
    assert matrix.claims("up", "somewhere/else.py", ["convert_index"]) == ["SPARSE"]


def test_claims_only_consider_rows_of_the_upstream():
    matrix = Matrix.parse(TWO_ROWS)
    assert matrix.claims("other", "csrc/cache_kernels.cu", ["gather_cache"]) == []


def test_order_merges_claimants_symbol_first_in_matrix_order():
    matrix = Matrix.parse(TWO_ROWS)
    assert matrix.order(by_symbol=["SPARSE"], by_path=["CACHE", "SPARSE"]) == ["SPARSE", "CACHE"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[[row]]\nid = 'A'\nupstream = 'u'\npaths = 'x'\n[[row\n", r"m\.toml:5: invalid TOML"),
        ("[[row]]\nid = 'A'\nupstream = 'u'\npahts = ['x']\n", r"m\.toml:4: row A: unknown key 'pahts'"),
        ("[[row]]\nid = 'A'\npaths = ['x']\n", r"m\.toml:1: row A: missing 'upstream'"),
        ("[[row]]\nid = 'A'\nupstream = 'u'\npaths = [1]\n", r"m\.toml:4: row A: 'paths' must be a list"),
        ("[[row]]\nid = 'A'\nupstream = 'u'\n", r"m\.toml:1: row A: claims nothing"),
        (
            "[[row]]\nid = 'A'\nupstream = 'u'\npaths = ['x']\n\n[[row]]\nid = 'A'\nupstream = 'u'\npaths = ['y']\n",
            r"m\.toml:7: row A: duplicate id A \(first defined at line 1\)",
        ),
        ("title = 'x'\n", r"m\.toml:1: unknown top-level key 'title'"),
        ("", r"m\.toml:1: no \[\[row\]\] tables"),
        ("[[row]]\nid = 'A'\nupstream = 'u'\npaths = ['/abs']\n", r"m\.toml:4: row A: glob '/abs': must be relative"),
    ],
)
def test_malformed_matrix_names_file_line_and_expectation(text, expected):
    with pytest.raises(MatrixError, match=expected):
        Matrix.parse(text, "m.toml")


def test_missing_matrix_file_is_an_input_error(tmp_path):
    with pytest.raises(MatrixError, match="matrix file does not exist") as info:
        Matrix.load(tmp_path / "nope.toml")
    assert info.value.exit_code == 2


def test_unknown_upstream_names_the_row_line():
    matrix = Matrix.parse(TWO_ROWS, "m.toml")
    with pytest.raises(MatrixError, match=r"m\.toml:2: row CACHE names upstream 'up', which is not configured"):
        matrix.check_upstreams(["vllm"])


def test_fingerprint_changes_with_the_rows():
    first = Matrix.parse(TWO_ROWS).fingerprint()
    second = Matrix.parse(TWO_ROWS.replace("concat_and_cache", "other")).fingerprint()
    assert first != second
