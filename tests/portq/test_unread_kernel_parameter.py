"""A kernel parameter the kernel's body never reads (``unread-kernel-parameter``).

A parameter upstream adds to a Triton kernel that nothing in the kernel's
body reads (only its autotuner's key or pruner, which pick among
configurations computing the same thing) changes nothing the kernel
computes: the port's kernel lacking it, and its launch not passing it, are
for a reader (NEEDS_REVIEW), not REAL_GAP, however much code reaches the
port. A parameter the body reads, or one a ``@triton.heuristics`` lambda
reads (it feeds a constexpr the body may read), is an input: still a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({{"BLOCK": b}}) for b in (64, 128)], key=["n"{key}])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n{param}, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2{use}, mask=offs < n)


def scale_rows(x, y):
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    scale_kernel[grid](x, y, n{arg})
'''


def upstream(key="", param="", use="", arg="", heuristic=""):
    text = BEFORE.format(key=key, param=param, use=use, arg=arg)
    if heuristic:
        text = text.replace("@triton.jit", heuristic + "\n@triton.jit", 1)
    return text


PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_kernel
@triton.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows
def scale(x, y):
    n = x.numel()
    _scale[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
'''


def _symbols(tmp_path, after):
    tree = {"kernels/mla_prefix/scale.py": PORT,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x, y):\n    return scale(x, y)\n",
            # the engine launches the kernel itself too, so the kernel is an entry point of its own
            "kernels/mla_prefix/direct.py": "from portq_kernels.mla_prefix.scale import _scale\n\n\n"
                                            "def run(x, y, n):\n    _scale[(1,)](x, y, n, BLOCK=128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: upstream()}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return {s.symbol: s for s in verdicts[1].symbols}, verdicts[1]


BUCKETED = dict(key=', "n_bucket"', param=", n_bucket", arg=", triton.next_power_of_2(pick(n))")


def test_a_kernel_parameter_only_the_autotuner_reads_is_for_a_reader(tmp_path):
    symbols, entry = _symbols(tmp_path, upstream(**BUCKETED))
    kernel, host = symbols["scale_kernel"], symbols["scale_rows"]
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "unread-kernel-parameter" in kernel.rules, kernel.rules
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "unread-kernel-parameter" in host.rules, host.rules
    assert entry.verdict == NEEDS_REVIEW, entry.reason


def test_a_kernel_parameter_the_body_reads_is_still_a_gap(tmp_path):
    symbols, entry = _symbols(tmp_path, upstream(key=', "n_bucket"', param=", n_bucket", use=" + n_bucket",
                                                 arg=", triton.next_power_of_2(pick(n))"))
    assert symbols["scale_kernel"].verdict == REAL_GAP, symbols["scale_kernel"].reason
    assert symbols["scale_rows"].verdict == REAL_GAP, symbols["scale_rows"].reason
    assert entry.verdict == REAL_GAP


def test_a_kernel_parameter_a_heuristics_lambda_reads_is_still_a_gap(tmp_path):
    after = upstream(**BUCKETED, heuristic='@triton.heuristics({"EVEN": lambda args: args["n_bucket"] == args["n"]})')
    symbols, entry = _symbols(tmp_path, after)
    kernel = symbols["scale_kernel"]
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "unread-kernel-parameter" not in kernel.rules
    assert symbols["scale_rows"].verdict == REAL_GAP, symbols["scale_rows"].reason
    assert entry.verdict == REAL_GAP


def _host_after(extra_read: str = "") -> str:
    """The host gains ``bucket`` and hands it to the kernel's new ``n_bucket`` (and, with ``extra_read``,
    reads it itself too)."""
    text = upstream(key=', "n_bucket"', param=", n_bucket", arg=", bucket")
    return text.replace("def scale_rows(x, y):\n    n = x.numel()",
                        f"def scale_rows(x, y, bucket):\n    n = x.numel(){extra_read}")


def test_a_host_parameter_only_handed_to_an_unread_kernel_parameter_is_for_a_reader(tmp_path):
    symbols, entry = _symbols(tmp_path, _host_after())
    host = symbols["scale_rows"]
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "unread-kernel-parameter" in host.rules, host.rules
    assert entry.verdict == NEEDS_REVIEW, entry.reason


def test_a_host_parameter_the_host_also_reads_is_still_a_gap(tmp_path):
    symbols, entry = _symbols(tmp_path, _host_after(" + bucket"))
    host = symbols["scale_rows"]
    assert host.verdict == REAL_GAP, host.reason
    assert entry.verdict == REAL_GAP


def test_an_unread_kernel_parameter_no_tuning_code_names_is_still_a_gap(tmp_path):
    # Nothing reads it, not even an autotuner's key: the caller's value handed in is the interface.
    symbols, entry = _symbols(tmp_path, upstream(param=", n_bucket", arg=", triton.next_power_of_2(pick(n))"))
    assert symbols["scale_kernel"].verdict == REAL_GAP, symbols["scale_kernel"].reason
    assert symbols["scale_rows"].verdict == REAL_GAP, symbols["scale_rows"].reason
    assert entry.verdict == REAL_GAP
