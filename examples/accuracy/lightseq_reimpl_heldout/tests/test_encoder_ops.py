import pytest
import torch

from engine import encoder

# The torch ops of csrc/bindings.cpp: layer_norm runs launch_layer_norm
# (layer_norm_kernel, block_reduce); attn_softmax runs launch_attn_softmax
# (attn_softmax_warp_kernel up to 64 keys with warp_reduce and warp_sum,
# attn_softmax_block_kernel up to 512 with block_reduce and block_sum);
# padding_mask runs launch_padding_mask.
OPS = ("layer_norm", "attn_softmax", "padding_mask")


def _built():
    return torch.cuda.is_available() and hasattr(torch.ops, "engine_lightseq") and all(
        hasattr(torch.ops.engine_lightseq, op) for op in OPS
    )


pytestmark = pytest.mark.skipif(
    not _built(), reason="needs a GPU and the engine_lightseq extension built from csrc/ with nvcc"
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("hidden", [256, 1024, 4096])
def test_layer_norm_matches_torch(dtype, hidden):
    torch.manual_seed(0)
    x = torch.randn(7, 13, hidden, device="cuda", dtype=dtype)
    g = torch.rand(hidden, device="cuda", dtype=dtype)
    b = torch.randn(hidden, device="cuda", dtype=dtype)
    y, var, mean = torch.ops.engine_lightseq.layer_norm(x, g, b)
    expected = torch.nn.functional.layer_norm(x.float(), (hidden,), g.float(), b.float(), 1e-8)
    torch.testing.assert_close(y.float(), expected, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(mean.float(), x.float().mean(-1).flatten(), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(var.float(), x.float().var(-1, unbiased=False).flatten(), atol=1e-2, rtol=1e-2)


def test_layer_norm_refuses_a_hidden_size_off_the_pack():
    x = torch.randn(2, 30, device="cuda")
    with pytest.raises(RuntimeError, match="multiple"):
        torch.ops.engine_lightseq.layer_norm(x, torch.ones(30, device="cuda"), torch.zeros(30, device="cuda"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("k_len", [17, 64, 100, 256, 512])
def test_attn_softmax_matches_torch_with_and_without_mask(dtype, k_len):
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 9, k_len, device="cuda", dtype=dtype)
    lens = torch.tensor([k_len, k_len // 2], device="cuda")
    mask = encoder.padding_mask(lens, k_len, dtype)
    expected = torch.softmax(scores.float() + mask.float().view(2, 1, 1, k_len), dim=-1)
    out = torch.ops.engine_lightseq.attn_softmax(scores.clone(), mask)
    torch.testing.assert_close(out.float(), expected, atol=2e-3, rtol=2e-2)
    assert out[1, :, :, k_len // 2:].abs().max().item() < 1e-3
    plain = torch.ops.engine_lightseq.attn_softmax(scores.clone(), None)
    torch.testing.assert_close(plain.float(), torch.softmax(scores.float(), -1), atol=2e-3, rtol=2e-2)


def test_attn_softmax_refuses_rows_longer_than_512():
    with pytest.raises(RuntimeError, match="512"):
        torch.ops.engine_lightseq.attn_softmax(torch.randn(1, 1, 2, 513, device="cuda"), None)


def test_encoder_layer_runs_on_a_padded_batch():
    torch.manual_seed(0)
    hidden, heads = 256, 4
    p = {n: torch.randn(s, device="cuda", dtype=torch.float16) * 0.05 for n, s in {
        "qkv": (3 * hidden, hidden), "out": (hidden, hidden), "fc1": (4 * hidden, hidden), "fc2": (hidden, 4 * hidden),
    }.items()}
    for n in ("ln1", "ln2"):
        p[n + "_g"] = torch.ones(hidden, device="cuda", dtype=torch.float16)
        p[n + "_b"] = torch.zeros(hidden, device="cuda", dtype=torch.float16)
    x = torch.randn(2, 40, hidden, device="cuda", dtype=torch.float16)
    out = encoder.encoder_layer(x, torch.tensor([40, 23], device="cuda"), p, heads)
    assert out.shape == x.shape and torch.isfinite(out).all()
