"""The ports against plain PyTorch references. Bit-exact where the op
packs or unpacks (the int32 word layout for 1, 2, 4 and 8 bits) or
dequantises ((W - zeros) * scales in the activations' dtype, as the
kernels do); the GEMM and GEMV against an fp32 reference of the same
dequantised weight within 2e-2 absolute plus 2e-2 relative on outputs of
magnitude about 1 (fp16 accumulation), the engine's MLP within 5e-2.
Tiny shapes: 128 inputs and outputs (the layer's multiple), groups of 64,
one autotune config under TRITON_INTERPRET=1."""

import pytest
import torch

from engine import QuantMLP, quantize_linear
from lowbit import GEMM, GEMV, DType, LowBitLinear, unpack_columns

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _layer(nbits, group, seed=0, dtype=DType.FP16):
    g = torch.Generator().manual_seed(seed)
    half = torch.float16 if dtype == DType.FP16 else torch.bfloat16
    codes = torch.randint(0, 2**nbits, (128, 128), generator=g, dtype=torch.uint8)
    scales = (torch.rand(128, 128 // group, generator=g) * 0.02 + 0.01).to(half)
    zeros = torch.randint(0, 2**nbits, (128, 128 // group), generator=g).to(half)
    layer = LowBitLinear(nbits, group, 128, 128, input_dtype=dtype, output_dtype=dtype)
    return layer.pack(codes.to(DEVICE), scales.to(DEVICE), zeros.to(DEVICE)), codes, scales, zeros


def _dequant(codes, scales, zeros, group):
    # (W - zeros) * scales in the scales' dtype, as (in, out)
    w = codes.to(scales.dtype).reshape(128, -1, group)
    return ((w - zeros[..., None]) * scales[..., None]).reshape(128, 128).t()


@pytest.mark.parametrize("nbits", [1, 2, 4, 8])
def test_pack_layout_is_bit_exact(nbits):
    layer, codes, _, _ = _layer(nbits, 64)
    assert layer.W_q.shape == (128 * nbits // 32, 128) and layer.W_q.dtype == torch.int32
    assert torch.equal(unpack_columns(layer.W_q.cpu(), nbits), codes.t())
    # word r of column c holds input 32/nbits*r + j at bits nbits*j
    word = int(layer.W_q[0, 3]) & 0xFFFFFFFF
    assert word == sum(int(codes[3, j]) << (nbits * j) for j in range(32 // nbits))


@pytest.mark.parametrize("nbits", [2, 4, 8])
def test_gemm_matches_the_dequantised_reference(nbits):
    layer, codes, scales, zeros = _layer(nbits, 64, seed=nbits)
    x = torch.randn(5, 128, generator=torch.Generator().manual_seed(1)).half() * 0.5
    w = _dequant(codes, scales, zeros, 64)
    want = x.float() @ w.float()
    got = layer.forward_manual(x.to(DEVICE), "GEMM").cpu().float()
    assert torch.allclose(got, want, atol=2e-2, rtol=2e-2), (got - want).abs().max()


def test_gemv_matches_the_dequantised_reference():
    layer, codes, scales, zeros = _layer(4, 64, seed=3)
    x = torch.randn(1, 128, generator=torch.Generator().manual_seed(2)).half() * 0.5
    want = x.float() @ _dequant(codes, scales, zeros, 64).float()
    got = layer.forward_manual(x.to(DEVICE), "GEMV").cpu().float()
    assert torch.allclose(got, want, atol=2e-2, rtol=2e-2), (got - want).abs().max()


def test_engine_mlp_reaches_both_kernels():
    g = torch.Generator().manual_seed(5)
    gate, up, down = (torch.randn(128, 128, generator=g) * 0.1 for _ in range(3))
    mlp = QuantMLP(gate.to(DEVICE), up.to(DEVICE), down.to(DEVICE), nbits=4, group_size=64)
    for rows in (1, 3):
        x = (torch.randn(rows, 128, generator=g) * 0.5).half()
        ref = [quantize_linear(w, 4, 64) for w in (gate, up, down)]
        ws = [_dequant(unpack_columns(r.W_q, 4).t(), r.scales.t(), r.zeros.t(), 64).float() for r in ref]
        h = torch.nn.functional.silu(x.float() @ ws[0]) * (x.float() @ ws[1])
        want = h.half().float() @ ws[2]
        got = mlp(x.to(DEVICE)).cpu().float()
        assert torch.allclose(got, want, atol=5e-2, rtol=5e-2), (rows, (got - want).abs().max())


def test_pruners_cap_the_k_tile_at_the_group_and_keep_distinct_configs():
    from lowbit.gemm import _prune_gemm, gemm_configs
    from lowbit.gemv import _prune_gemv, gemv_configs

    nargs = {"M": 3, "N": 128, "K": 256, "group_size": 32}
    gemm = list(_prune_gemm(gemm_configs(), nargs))
    assert gemm and all(c.kwargs["BLOCK_SIZE_K"] <= 32 and c.kwargs["BLOCK_SIZE_M"] == 16 for c in gemm)
    assert len({(tuple(sorted(c.kwargs.items())), c.num_warps, c.num_stages) for c in gemm}) == len(gemm)
    gemv = list(_prune_gemv(gemv_configs(), nargs))
    assert gemv and all(c.kwargs["BLOCK_SIZE_M"] == 1 and c.kwargs["BLOCK_SIZE_K"] <= 32 for c in gemv)
    assert all(c.pre_hook is not None for c in gemv)


def test_zero_output_hook_clears_the_named_argument():
    from lowbit.gemv import zero_output

    out = torch.ones(4)
    zero_output("c_ptr")({"c_ptr": out})
    assert torch.equal(out, torch.zeros(4))


def test_hosts_called_directly_match_the_layer():
    from lowbit.gemm import gemm_lowbit
    from lowbit.gemv import gemv_lowbit

    layer, codes, scales, zeros = _layer(2, 32, seed=7)
    x = (torch.randn(1, 128, generator=torch.Generator().manual_seed(4)) * 0.5).half().to(DEVICE)
    args = (layer.W_q, layer.scales, layer.zeros, 2, 32, 3, 16)
    want = x.cpu().float() @ _dequant(codes, scales, zeros, 32).float()
    for host in (gemm_lowbit, gemv_lowbit):
        got = host(x, *args).cpu().float()
        assert torch.allclose(got, want, atol=2e-2, rtol=2e-2), (host.__name__, (got - want).abs().max())
    assert GEMM().matmul_type == "GEMM" and GEMV().matmul_type == "GEMV"
    assert DType("FP16") is DType.FP16


def test_forward_auto_warms_up_once_and_picks_the_gemv_for_one_row():
    from lowbit import linear

    layer, codes, scales, zeros = _layer(4, 64, seed=11)
    x = (torch.randn(1, 128, generator=torch.Generator().manual_seed(6)) * 0.5).half().to(DEVICE)
    signature = (1,) + layer.signature
    linear._CHOSEN.pop(signature, None)
    layer.warmup(signature, layer._args(x))
    assert linear._CHOSEN[signature]["forward"] in (GEMM.forward, GEMV.forward)
    got = layer.forward_auto(x).cpu().float()
    want = x.cpu().float() @ _dequant(codes, scales, zeros, 64).float()
    assert torch.allclose(got, want, atol=2e-2, rtol=2e-2)
