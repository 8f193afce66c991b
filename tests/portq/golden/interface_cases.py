"""Sources of tricky cases 45-46 (docs/tricky-cases.md): what is interface
and what is implementation on a re-implemented port, seen at the launch
(derived arguments) and one call down (a helper the ported wrapper calls)."""

from tests.portq.golden.cases import SPLAT_BEFORE, SPLAT_HOST, splat_tree

# --- 45: launch arguments upstream derives (held-out aiter 9a476446b2) --------------

DERIVED_HOST = SPLAT_HOST
DERIVED_BEFORE = SPLAT_BEFORE
DERIVED_AFTER = SPLAT_BEFORE.replace(
    "SEQ_LEN, BLOCK_D: tl.constexpr):", "SEQ_LEN, BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr,\n"
    "                       SPLIT: tl.constexpr):").replace(
    "    row = tl.program_id(0)\n", "    row = tl.program_id(0) * BLOCK_T // SPLIT\n").replace(
    "    t = x.shape[0]\n", "    t = x.shape[0]\n    BLOCK_T = 32\n    split = triton.next_power_of_2(t) // BLOCK_T\n").replace(
    "BLOCK_D=x.shape[1])", "BLOCK_D=x.shape[1], BLOCK_T=BLOCK_T, SPLIT=split)")
"""The kernel gains two tile constexprs; the wrapper computes both from a
constant and the input's shape."""

SUPPLIED_AFTER = DERIVED_AFTER.replace("def scale_rows(x, out):", "def scale_rows(x, out, block_t=32):").replace(
    "    BLOCK_T = 32\n", "    BLOCK_T = block_t\n")
"""The counter-case: the tile size is now a wrapper parameter a caller supplies."""


def derived_tree() -> dict[str, str]:
    """``splat_tree``'s re-implemented port, its kernel anchored too."""
    tree = splat_tree()
    port = tree["kernels/mla_prefix/rows.py"]
    tree["kernels/mla_prefix/rows.py"] = port.replace(
        "@triton.jit\ndef _double_kernel", f"# portq: ports vllm:{SPLAT_HOST}::_scale_rows_kernel\n"
        "@triton.jit\ndef _double_kernel")
    return tree


# --- 46: a new path one call down (held-out aiter 0d9c083e8f) -------------------------

CALLEE_HOST = "aiter/ops/triton/gather_kv_b_proj.py"
CALLEE_BEFORE = '''\
from enum import IntEnum

import triton
import triton.language as tl


class Style(IntEnum):
    NEOX = (0,)
    GPTJ = 1


@triton.jit
def _gptj_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def _launch(x, out, offsets, style, fused: bool):
    n = x.numel()
    grid = (triton.cdiv(n, 64),)
    if offsets is None:
        if style == Style.GPTJ:
            _gptj_kernel[grid](x, n, BLOCK=64)
        elif style == Style.NEOX:
            raise NotImplementedError("NEOX is not implemented")
    else:
        raise NotImplementedError("offsets are not implemented")
    return out


def rotate(x, style: int, fused: bool = False):
    out = x.clone()
    return _launch(x, out, None, style, fused)
'''
NEOX_KERNEL = '''

@triton.jit
def _neox_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)
'''
CALLEE_AFTER = CALLEE_BEFORE.replace("\n\ndef _launch(", NEOX_KERNEL + "\n\ndef _launch(").replace(
    '            raise NotImplementedError("NEOX is not implemented")',
    '            if fused:\n                raise NotImplementedError("fused NEOX is not implemented")\n'
    '            _neox_kernel[grid](x, n, BLOCK=64)')
"""Only the helper changes: ``style == NEOX`` used to raise and now launches a new kernel."""

CALLEE_GPTJ_SWAP = CALLEE_BEFORE.replace("BLOCK=64)", "BLOCK=128)")
"""A change in the helper that opens no new path (the GPT-J launch's block): not the caller's new path."""

HELPERS = "aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"
IMPORTED_HELPERS_BEFORE = CALLEE_BEFORE.split("\n\ndef rotate(")[0] + "\n"
IMPORTED_HELPERS_AFTER = CALLEE_AFTER.split("\n\ndef rotate(")[0] + "\n"
IMPORTING_HOST_BEFORE = '''\
from aiter.ops.triton._triton_kernels.gather_kv_b_proj import _launch


def rotate(x, style: int, fused: bool = False):
    out = x.clone()
    return _launch(x, out, None, style, fused)
'''
IMPORTING_HOST_AFTER = IMPORTING_HOST_BEFORE.replace("    out = x.clone()\n", "    out = x.clone()  # a copy\n")
"""The helper in another module of the package; the commit edits both (the wrapper only in a comment)."""

_PORT = '''import triton
import triton.language as tl

NEOX = 0
GPTJ = 1


@triton.jit
def _double(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
{extra}

def _run(x, style):
{dispatch}
    _double[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
    return x


# portq: ports vllm:{host}::rotate
def rotate_pairs(x, {param}=GPTJ):
    return _run(x, {param})
'''
STILL_RAISES = "    if style != GPTJ:\n        raise NotImplementedError('only GPT-J')"
HANDLES_NEOX = ("    if style == NEOX:\n        _triple[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)\n"
                "        return x")
TRIPLE = '''

@triton.jit
def _triple(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)
'''
UNDECIDABLE = "    if x.is_cuda and style != GPTJ:\n        raise NotImplementedError('only GPT-J on CUDA')"


def callee_tree(dispatch: str = STILL_RAISES, param: str = "style", host: str = CALLEE_HOST) -> dict[str, str]:
    """A re-implemented port of the wrapper only: own names, its own helper ``_run``; a caller in engine code."""
    extra = TRIPLE if dispatch == HANDLES_NEOX else ""
    port = _PORT.format(extra=extra, dispatch=dispatch.replace("style", param), param=param, host=host)
    caller = ("from portq_kernels.mla_prefix.rotate import rotate_pairs\n\n\n"
              "def prepare(x):\n    return rotate_pairs(x)\n")
    return {"kernels/mla_prefix/rotate.py": port, "kernels/mla_prefill/prepare.py": caller}
