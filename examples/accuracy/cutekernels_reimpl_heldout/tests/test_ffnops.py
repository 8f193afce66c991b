"""ffnops against plain torch, and the engine's feed-forward block end to end.

Runs on a CUDA device, or on the CPU under TRITON_INTERPRET=1.
"""

import pytest
import torch

from engine import FeedForwardBlock
from ffnops import POW2_BLOCKS, norm_tiles
from ffnops.norm import RMSNormOp, rms_norm, rms_norm_reference, rms_norm_rows_kernel
from ffnops.gated import SwiGLUOp, silu_gate_kernel, swiglu, swiglu_reference

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_norm_tiles_take_one_step_when_the_row_fits():
    assert POW2_BLOCKS == [64, 128, 256, 512, 1024]
    assert norm_tiles(40) == (16, 64)
    assert norm_tiles(300) == (2, 512)
    assert norm_tiles(5000) == (1, 1024)


@pytest.mark.parametrize("shape", [(3, 40), (2, 5, 300), (4, 1500)])
def test_rms_norm_matches_torch(shape):
    torch.manual_seed(0)
    x = torch.randn(*shape, device=DEVICE)
    w = torch.rand(shape[-1], device=DEVICE) + 0.5
    expected = rms_norm_reference(x, w, 1e-6)
    torch.testing.assert_close(rms_norm(x, w, 1e-6), expected)
    torch.testing.assert_close(RMSNormOp.forward(x, w, 1e-6, 2, 64), expected)


def test_rms_norm_kernel_launched_directly_reads_strides():
    torch.manual_seed(1)
    x = torch.randn(6, 33, device=DEVICE)
    w = torch.rand(33, device=DEVICE)
    out = torch.empty(6, 33, device=DEVICE)
    rms_norm_rows_kernel[(3,)](x, x.stride(0), x.stride(1), w, out, out.stride(0), out.stride(1),
                               1e-5, 6, 33, ROWS=2, COLS=16)
    torch.testing.assert_close(out, rms_norm_reference(x, w, 1e-5))


@pytest.mark.parametrize("n", [7, 1000, 3000])
def test_swiglu_matches_torch(n):
    torch.manual_seed(2)
    gate = torch.randn(n, device=DEVICE)
    up = torch.randn(n, device=DEVICE)
    expected = swiglu_reference(gate, up)
    torch.testing.assert_close(swiglu(gate, up), expected)
    torch.testing.assert_close(SwiGLUOp.forward(gate, up, 128), expected)
    out = torch.empty_like(gate)
    silu_gate_kernel[(triton_cdiv(n, 256),)](gate, up, out, n, BLOCK=256)
    torch.testing.assert_close(out, expected)


def test_swiglu_rejects_mismatched_shapes():
    with pytest.raises(AssertionError):
        swiglu(torch.zeros(4, device=DEVICE), torch.zeros(5, device=DEVICE))


def test_feed_forward_block_matches_torch():
    torch.manual_seed(3)
    width, inner = 48, 96
    hidden = torch.randn(5, width, device=DEVICE)
    gamma = torch.rand(width, device=DEVICE) + 0.5
    wg, wu = torch.randn(width, inner, device=DEVICE) / 7, torch.randn(width, inner, device=DEVICE) / 7
    wd = torch.randn(inner, width, device=DEVICE) / 10
    x = rms_norm_reference(hidden, gamma, 1e-6)
    expected = hidden + swiglu_reference(x @ wg, x @ wu) @ wd
    torch.testing.assert_close(FeedForwardBlock(gamma, wg, wu, wd)(hidden), expected, rtol=1e-4, atol=1e-4)


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b
