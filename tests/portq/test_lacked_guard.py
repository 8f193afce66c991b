"""A guard the port does not have (``lacked-guard``): a change confined to the context managers of
``with`` statements around an unchanged block (``with torch.cuda.device(x.device):`` becoming a
backend-dispatched ``with device_fn.device(x.device):`` around the same launch), in a definition whose
port has no ``with`` statement, lies in a statement the port does not have: NOT_APPLICABLE/not-carried.
A port that has a guard, a block that changes too, or a guard binding a new name stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def double(x):
    n = x.numel()
    with torch.cuda.device(x.device):
        _double_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
    return x
'''
AFTER = BEFORE.replace("import triton.language as tl\n", "import triton.language as tl\n\nfrom .runtime import device_fn\n") \
    .replace("    with torch.cuda.device(x.device):\n", "    with device_fn.device(x.device):\n")

PORT = '''import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::_double_kernel
@triton.jit
def _twice(src, count, TILE: tl.constexpr):
    i = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(src + i, tl.load(src + i, mask=i < count) * 2, mask=i < count)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::double
def twice(x):
    count = x.numel()
    _twice[(triton.cdiv(count, 128),)](x, count, TILE=128)
    return x
'''
GUARDED_PORT = PORT.replace("    _twice[(triton.cdiv(count, 128),)](x, count, TILE=128)\n",
                            "    with torch.cuda.device(x.device):\n"
                            "        _twice[(triton.cdiv(count, 128),)](x, count, TILE=128)\n").replace(
    "import triton\n", "import torch\nimport triton\n", 1)


def _host(tmp_path, after=AFTER, port=PORT):
    tree = {"kernels/mla_prefix/ops.py": port,
            "kernels/mla_prefill/run.py": "from portq_kernels.mla_prefix.ops import twice\n\n\n"
                                          "def run(x):\n    return twice(x)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: BEFORE}),
                                              CommitSpec("guard", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "double")


def test_a_guard_the_port_does_not_have_is_not_carried(tmp_path):
    host = _host(tmp_path)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "lacked-guard" in host.rules
    assert "device_fn.device(x.device)" in host.reason, host.reason


def test_a_port_with_a_guard_stays_flagged(tmp_path):
    assert _host(tmp_path, port=GUARDED_PORT).verdict == NEEDS_REVIEW


def test_a_block_changed_under_the_guard_stays_flagged(tmp_path):
    after = AFTER.replace("BLOCK=128)\n    return x", "BLOCK=128)\n        x.mul_(1)\n    return x")
    assert _host(tmp_path, after=after).verdict == NEEDS_REVIEW


def test_a_guard_binding_a_name_the_block_reads_stays_flagged(tmp_path):
    after = AFTER.replace("    with device_fn.device(x.device):\n", "    with device_fn.device(x.device) as n:\n")
    assert _host(tmp_path, after=after).verdict == NEEDS_REVIEW


METHOD_BEFORE = BEFORE.replace('''def double(x):
    n = x.numel()
    with torch.cuda.device(x.device):
        _double_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
    return x
''', '''class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        n = x.numel()
        with torch.cuda.device(x.device):
            _double_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
        return x
''')
METHOD_AFTER = METHOD_BEFORE.replace("        with torch.cuda.device(x.device):\n",
                                     "        with device_fn.device(x.device):\n")
METHOD_PORT = PORT.replace('''# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::double
def twice(x):
    count = x.numel()
    _twice[(triton.cdiv(count, 128),)](x, count, TILE=128)
    return x
''', '''class Twice(torch.autograd.Function):
    # portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::Double.forward
    @staticmethod
    def forward(ctx, x):
        count = x.numel()
        _twice[(triton.cdiv(count, 128),)](x, count, TILE=128)
        return x


def twice(x):
    return Twice.apply(x)
''').replace("import triton\n", "import torch\nimport triton\n", 1)


def test_a_method_whose_guard_the_port_lacks_is_not_carried(tmp_path):
    # A method's text starts at its column: it is read as indented as the rest of it.
    tree = {"kernels/mla_prefix/ops.py": METHOD_PORT,
            "kernels/mla_prefill/run.py": "from portq_kernels.mla_prefix.ops import twice\n\n\n"
                                          "def run(x):\n    return twice(x)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: METHOD_BEFORE}),
                                              CommitSpec("guard", files={OPS: METHOD_AFTER})], tree)
    forward = next(s for s in verdicts[1].symbols if s.symbol.endswith("forward"))
    assert (forward.verdict, forward.justification) == (NOT_APPLICABLE, "not-carried"), forward.reason
    assert "lacked-guard" in forward.rules
