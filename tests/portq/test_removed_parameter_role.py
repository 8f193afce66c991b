"""A parameter upstream removes is matched in the port by name; a port written under its own names
may still take it under another one (``removed-parameter-role``). ``the port does not take removed
parameter x_stride`` is sound only where the port's parameters of that kind (runtime, or
``tl.constexpr``) are no more than upstream's new ones (less those the port declares not carried):
then no parameter of the port can stand in the removed one's place. Where the port takes more, it
may still take the removed input under its own name (here the strides, which upstream now drops to
index rows as contiguous): for a reader, never IN_SYNC."""
from __future__ import annotations

from portq.core.model import IN_SYNC
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["src/*.py"]
tree     = ["ops/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import triton
import triton.language as tl


@triton.jit
def norm_kernel(x_ptr, x_stride, y_ptr, y_stride, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * y_stride + cols, x * 2.0, mask=cols < n_cols)
'''

AFTER_STRIDES = '''\
import triton
import triton.language as tl


@triton.jit
def norm_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * n_cols + cols, x * 2.0, mask=cols < n_cols)
'''

AFTER_CONSTEXPR = '''\
import triton
import triton.language as tl


@triton.jit
def norm_kernel(x_ptr, x_stride, y_ptr, y_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * y_stride + cols, x * 2.0, mask=cols < n_cols)
'''

OWN_NAMES_WITH_STRIDES = '''\
import triton
import triton.language as tl


# portq: ports vllm:src/norm.py::norm_kernel
@triton.jit
def double_rows(src, src_row_stride, dst, dst_row_stride, width, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    v = tl.load(src + row * src_row_stride + cols, mask=cols < width)
    tl.store(dst + row * dst_row_stride + cols, v * 2.0, mask=cols < width)
'''

OWN_NAMES_CONTIGUOUS = '''\
import triton
import triton.language as tl


# portq: ports vllm:src/norm.py::norm_kernel
@triton.jit
def double_rows(src, dst, width, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    v = tl.load(src + row * width + cols, mask=cols < width)
    tl.store(dst + row * width + cols, v * 2.0, mask=cols < width)
'''


def _entry(tmp_path, after: str, port: str):
    return classify_commit(tmp_path, {"src/norm.py": BEFORE}, {"src/norm.py": after},
                           {"ops/norm.py": port}, MATRIX)


def test_a_port_that_takes_more_runtime_parameters_than_upstream_now_is_not_in_sync(tmp_path):
    entry = _entry(tmp_path, AFTER_STRIDES, OWN_NAMES_WITH_STRIDES)
    assert entry.verdict != IN_SYNC, entry.reason
    assert "removed-parameter-role" in entry.rules, entry.rules


def test_a_port_with_upstreams_new_parameter_list_under_its_own_names_stays_in_sync(tmp_path):
    entry = _entry(tmp_path, AFTER_STRIDES, OWN_NAMES_CONTIGUOUS)
    assert "removed-parameter-role" not in entry.rules, entry.rules
    assert entry.verdict == IN_SYNC, entry.reason


def test_a_removed_constexpr_is_compared_with_the_ports_constexprs_only(tmp_path):
    # The port takes more runtime parameters than upstream's new kernel (its strides are still
    # upstream's), but no constexpr that could stand for the removed one.
    entry = _entry(tmp_path, AFTER_CONSTEXPR, OWN_NAMES_WITH_STRIDES)
    assert "removed-parameter-role" not in entry.rules, entry.rules
    assert entry.verdict == IN_SYNC, entry.reason


CPP_MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["src/*.cu"]
tree     = ["csrc/"]
tests    = ["tests/"]
"""

CPP_SOURCE = '''\
void compute(const float* x,
             const int rows,
             const int {second},
             float* y) {{
  for (int i = 0; i < rows; ++i)
    y[i] = x[i] * 2;
}}
'''

CPP_TREE = {"csrc/norm.cu": "// portq: ports vllm:src/norm.cu::compute\n"
                            "void double_rows(const float* src, const int n, const int width, float* dst) {\n"
                            "  for (int i = 0; i < n; ++i)\n    dst[i] = src[i] * 2;\n}\n",
            "csrc/ops.cu": "void run(const float* x, float* y) { double_rows(x, 4, 8, y); }\n"}


def test_a_cpp_parameter_that_loses_only_its_name_is_no_removed_input(tmp_path):
    # C++ binds by position: the unnamed parameter still takes its argument, so the port taking a
    # parameter there under its own name is no sign of a removed input.
    entry = classify_commit(tmp_path, {"src/norm.cu": CPP_SOURCE.format(second="axis_size")},
                            {"src/norm.cu": CPP_SOURCE.format(second="")}, CPP_TREE, CPP_MATRIX)
    assert "removed-parameter-role" not in entry.rules, entry.rules
