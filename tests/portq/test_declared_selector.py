"""A dispatch on a selector the tree declares not carried (issue 24, the twenty-third held-out split;
``declared-selector``).

A host function picks its backend by comparing a parameter with one key per
branch (``if backend == Backend.cuda: ... elif backend == Backend.triton:``),
or looks the function up in a module-level table keyed the same way
(``_KERNELS[backend](...)``). A tree that declares the selector not carried
runs one backend: the one whose branch reaches what the tree ports (launches
a kernel or calls a function an anchor ports), when exactly one branch does.
With the selector fixed to that key on both sides (the chain replaced by its
branch, the table lookup by its entry), the same definition before and after
means the change lies only in backends the port does not run:
NOT_APPLICABLE/not-carried. A change in the port's branch, a selector the
tree does not declare, two branches reaching ported code, or a table whose
entry for that key now names another function, stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch
import triton
import triton.language as tl

from .enums import Backend
from .cuda_ops import cuda_scale


@triton.jit
def scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


def triton_scale(x, y, BLOCK):
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)


def scale_rows(x: torch.Tensor, backend: Backend, BLOCK: int) -> torch.Tensor:
    y = torch.empty_like(x)
    if backend == Backend.cuda:
        assert x.is_cuda, "x is not on the GPU"
        cuda_scale(x=x, y=y, BLOCK=BLOCK)
    elif backend == Backend.triton:
        triton_scale(x=x, y=y, BLOCK=BLOCK)
    else:
        raise ValueError(f"unexpected backend ({backend})")
    return y
'''

CHAIN_AFTER = BEFORE.replace('        assert x.is_cuda, "x is not on the GPU"\n', "")

TABLE_AFTER = BEFORE.replace('''def scale_rows(''', '''_KERNELS = {Backend.cuda: cuda_scale, Backend.triton: triton_scale}


def scale_rows(''').replace('''    if backend == Backend.cuda:
        assert x.is_cuda, "x is not on the GPU"
        cuda_scale(x=x, y=y, BLOCK=BLOCK)
    elif backend == Backend.triton:
        triton_scale(x=x, y=y, BLOCK=BLOCK)
    else:
        raise ValueError(f"unexpected backend ({backend})")
''', '''    _KERNELS[backend](x=x, y=y, BLOCK=BLOCK)
''')

PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_kernel
@triton.jit
def _double(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::triton_scale
def _launch(x, y, block):
    n = x.numel()
    _double[(n // block + 1,)](x, y, n, BLOCK=block)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows
# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows[backend] -- Triton only
def scale(x, block):
    y = torch.empty_like(x)
    _launch(x, y, block)
    return y
'''

UNDECLARED_PORT = PORT.replace("# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows[backend]"
                               " -- Triton only\n", "")


def _host(tmp_path, before, after, port=PORT):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x):\n    return scale(x, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "scale_rows")


def test_a_change_in_a_backend_the_port_does_not_select_is_not_carried(tmp_path):
    host = _host(tmp_path, BEFORE, CHAIN_AFTER)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "declared-selector" in host.rules
    assert "Backend.triton" in host.reason


def test_a_chain_become_a_table_keyed_the_same_way_is_not_carried(tmp_path):
    host = _host(tmp_path, BEFORE, TABLE_AFTER)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "declared-selector" in host.rules


def test_a_change_in_the_ported_backend_is_compared(tmp_path):
    after = CHAIN_AFTER.replace("        triton_scale(x=x, y=y, BLOCK=BLOCK)\n",
                                "        triton_scale(x=x.contiguous(), y=y, BLOCK=BLOCK)\n")
    host = _host(tmp_path, BEFORE, after)
    assert "declared-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_table_entry_naming_another_function_is_compared(tmp_path):
    after = TABLE_AFTER.replace("Backend.triton: triton_scale}", "Backend.triton: cuda_scale}")
    host = _host(tmp_path, BEFORE, after)
    assert "declared-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_selector_the_tree_does_not_declare_is_compared(tmp_path):
    host = _host(tmp_path, BEFORE, CHAIN_AFTER, UNDECLARED_PORT)
    assert "declared-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_two_branches_reaching_ported_code_are_compared(tmp_path):
    # Both backends launch what the tree ports: which one the port runs is not known.
    before = BEFORE.replace("        cuda_scale(x=x, y=y, BLOCK=BLOCK)\n", "        triton_scale(x=x, y=y, BLOCK=BLOCK)\n")
    after = before.replace('        assert x.is_cuda, "x is not on the GPU"\n', "")
    host = _host(tmp_path, before, after)
    assert "declared-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_change_outside_the_dispatch_is_compared(tmp_path):
    after = CHAIN_AFTER.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n")
    host = _host(tmp_path, BEFORE, after)
    assert "declared-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE
