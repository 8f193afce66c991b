"""A dispatch on a local the port never computes (issue 24; ``declared-source-selector``).

A host function reads a value from a helper (a device query, a capability
probe: ``arch = device_arch()[x.device.index]``) and picks its backend by an
``if``/``elif`` chain comparing that local with one key per branch. A tree
that declares the helper not carried as a whole has no such dispatch: it runs
one backend, the one whose branch reaches what the tree ports, when exactly
one branch does on each side and it is the same key. With the local fixed to
that key (its one binding, at the function's top level, set aside; the chain
replaced by the key's branch), a definition the same before and after changed
only backends the port does not run: NOT_APPLICABLE/not-carried. A change in
the port's branch, a helper the tree does not declare, a key that stops
reaching ported code, or the local read anywhere else stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch
import triton
import triton.language as tl

from .cuda_ops import cuda_scale, cuda_scale_wide


def device_arch():
    return [f"sm{a}{b}" for a, b in (torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count()))]


@triton.jit
def scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


def triton_scale(x, y, BLOCK):
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)


def scale_rows(x: torch.Tensor, BLOCK: int) -> torch.Tensor:
    y = torch.empty_like(x)
    arch = device_arch()[x.device.index]
    if arch == "sm80":
        cuda_scale(x=x, y=y, BLOCK=BLOCK)
    elif arch == "sm86":
        triton_scale(x=x, y=y, BLOCK=BLOCK)
    elif arch == "sm89":
        cuda_scale(x=x, y=y, BLOCK=BLOCK, wide=False)
    else:
        raise ValueError(f"unsupported architecture ({arch})")
    return y
'''

NEW_KEY = BEFORE.replace('''    else:
        raise ValueError''', '''    elif arch == "sm120":
        cuda_scale_wide(x=x, y=y, BLOCK=BLOCK)
    else:
        raise ValueError''')

OTHER_BRANCH = BEFORE.replace("BLOCK=BLOCK, wide=False)", "BLOCK=BLOCK, wide=True)")

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
# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::device_arch -- one backend on every device
def scale(x, block):
    y = torch.empty_like(x)
    _launch(x, y, block)
    return y
'''

UNDECLARED_PORT = PORT.replace("# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::device_arch"
                               " -- one backend on every device\n", "")


def _host(tmp_path, before, after, port=PORT):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x):\n    return scale(x, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "scale_rows")


def test_a_new_key_for_another_backend_is_not_carried(tmp_path):
    host = _host(tmp_path, BEFORE, NEW_KEY)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "declared-source-selector" in host.rules
    assert "'sm86'" in host.reason and "device_arch" in host.reason


def test_a_change_in_another_key_s_branch_is_not_carried(tmp_path):
    host = _host(tmp_path, BEFORE, OTHER_BRANCH)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "declared-source-selector" in host.rules


def test_a_change_in_the_ported_backend_s_branch_is_compared(tmp_path):
    after = NEW_KEY.replace("        triton_scale(x=x, y=y, BLOCK=BLOCK)\n",
                            "        triton_scale(x=x.contiguous(), y=y, BLOCK=BLOCK)\n")
    host = _host(tmp_path, BEFORE, after)
    assert "declared-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_the_ported_key_sent_to_another_backend_is_compared(tmp_path):
    after = BEFORE.replace('''    elif arch == "sm86":
        triton_scale(x=x, y=y, BLOCK=BLOCK)
''', '''    elif arch == "sm86":
        cuda_scale_wide(x=x, y=y, BLOCK=BLOCK)
    elif arch == "sm75":
        triton_scale(x=x, y=y, BLOCK=BLOCK)
''')
    host = _host(tmp_path, BEFORE, after)
    assert "declared-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_helper_the_tree_does_not_declare_is_compared(tmp_path):
    host = _host(tmp_path, BEFORE, NEW_KEY, UNDECLARED_PORT)
    assert "declared-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_the_local_read_outside_the_dispatch_is_compared(tmp_path):
    before = BEFORE.replace("    return y\n", "    y.arch = arch\n    return y\n")
    after = NEW_KEY.replace("    return y\n", "    y.arch = arch\n    return y\n")
    host = _host(tmp_path, before, after)
    assert "declared-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_change_outside_the_dispatch_is_compared(tmp_path):
    after = NEW_KEY.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n")
    host = _host(tmp_path, BEFORE, after)
    assert "declared-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE
