"""A dispatch a pinned copy never had (issue 24; ``pinned-source-selector``).

A project vendors a host function verbatim and pins it at a commit where it
ran one backend. Upstream later turns the function into a dispatcher: it
reads a value from a probe of its own module (``arch = device_arch()[...]``)
and picks a backend per key, the old body moved into a helper that one key's
branch calls. That commit is the gap; the copy, which never calls the probe,
runs the one backend it was copied with. A later change to the dispatcher
that, with the probe's binding set aside and the local fixed to the one key
whose branch reaches what the tree ports (directly, through definitions of
the module that call it, or through an imported name of it), leaves both sides
the same lies only in backends the copy never had: NOT_APPLICABLE/not-carried.
An unpinned port, a copy that calls the probe itself, a change in the ported
key's branch, or two keys reaching ported code stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec, build_repository
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

HEAD = '''import torch
import triton
import triton.language as tl

from .cuda_ops import cuda_scale, cuda_scale_wide


@triton.jit
def scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


def triton_scale(x, y, BLOCK):
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)
'''

BASE = HEAD + '''

def scale_rows(x, BLOCK):
    y = torch.empty_like(x)
    triton_scale(x, y, BLOCK)
    return y
'''

DISPATCH = HEAD + '''

def device_arch():
    return [f"sm{a}{b}" for a, b in (torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count()))]


def _triton_path(x, BLOCK):
    y = torch.empty_like(x)
    triton_scale(x, y, BLOCK)
    return y


def _cuda_path(x, BLOCK, wide=False):
    y = torch.empty_like(x)
    cuda_scale(x, y, BLOCK, wide=wide)
    return y


def scale_rows(x, BLOCK):
    arch = device_arch()[x.device.index]
    if arch == "sm80":
        return _cuda_path(x, BLOCK)
    elif arch == "sm86":
        return _triton_path(x, BLOCK)
    else:
        raise ValueError(f"unsupported architecture ({arch})")
'''

NEW_KEY = DISPATCH.replace('''    else:
        raise ValueError''', '''    elif arch == "sm100":
        return _cuda_path(x, BLOCK, wide=True)
    else:
        raise ValueError''')

PORT_HEAD = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_kernel{pin}
@triton.jit
def scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::triton_scale{pin}
def triton_scale(x, y, BLOCK):
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)
'''

PORT = PORT_HEAD + '''

# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows{pin}
def scale_rows(x, BLOCK):
    y = torch.empty_like(x)
    triton_scale(x, y, BLOCK)
    return y
'''

PROBING_PORT = PORT_HEAD + '''

def device_arch():
    return [f"sm{a}{b}" for a, b in (torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count()))]


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows{pin}
def scale_rows(x, BLOCK):
    arch = device_arch()[x.device.index]
    y = torch.empty_like(x)
    triton_scale(x, y, BLOCK)
    return y
'''


def _host(tmp_path, after, port=PORT, pinned=True):
    commits = [CommitSpec("base", files={OPS: BASE}), CommitSpec("dispatch", files={OPS: DISPATCH}),
               CommitSpec("change", files={OPS: after})]
    shas = build_repository(tmp_path / "probe", commits)
    pin = f" @{shas[0][:10]}" if pinned else ""
    tree = {"kernels/mla_prefix/scale.py": port.replace("{pin}", pin),
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale_rows\n\n\n"
                                            "def apply(x):\n    return scale_rows(x, 128)\n"}
    verdicts, _ = classify_history(tmp_path / "scan", commits, tree)
    return next(s for s in verdicts[2].symbols if s.symbol == "scale_rows")


def test_a_new_key_for_another_backend_is_not_carried_by_a_pinned_copy(tmp_path):
    host = _host(tmp_path, NEW_KEY)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "pinned-source-selector" in host.rules
    assert "'sm86'" in host.reason and "device_arch" in host.reason


def test_a_change_in_another_key_s_branch_is_not_carried_by_a_pinned_copy(tmp_path):
    host = _host(tmp_path, DISPATCH.replace("return _cuda_path(x, BLOCK)", "return _cuda_path(x, BLOCK, wide=True)"))
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "pinned-source-selector" in host.rules


def test_an_unpinned_port_is_compared(tmp_path):
    host = _host(tmp_path, NEW_KEY, pinned=False)
    assert "pinned-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_copy_that_calls_the_probe_is_compared(tmp_path):
    host = _host(tmp_path, NEW_KEY, port=PROBING_PORT)
    assert "pinned-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_a_change_in_the_ported_key_s_branch_is_compared(tmp_path):
    host = _host(tmp_path, NEW_KEY.replace("return _triton_path(x, BLOCK)", "return _triton_path(x.contiguous(), BLOCK)"))
    assert "pinned-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE


def test_another_key_reaching_ported_code_through_a_helper_is_compared(tmp_path):
    after = NEW_KEY.replace('''    cuda_scale(x, y, BLOCK, wide=wide)
''', '''    if wide:
        triton_scale(x, y, BLOCK)
    cuda_scale(x, y, BLOCK, wide=wide)
''')
    host = _host(tmp_path, after)
    assert "pinned-source-selector" not in host.rules, host.reason
    assert host.verdict != NOT_APPLICABLE
