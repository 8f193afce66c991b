import pytest
import torch

from engine import encoder

# The torch ops of csrc/lightseq_ops.cpp: layer_norm runs LightSeq's
# launch_layer_norm (ker_layer_norm), attn_softmax its launch_attn_softmax
# (ker_attn_softmax_lt32 up to 64 keys, ker_attn_softmax up to 512).
OPS = ("layer_norm", "attn_softmax")

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available()
    or not hasattr(torch.ops, "engine_lightseqv")
    or not all(hasattr(torch.ops.engine_lightseqv, op) for op in OPS),
    reason="needs a GPU and the engine_lightseqv extension built from csrc/lightseq_ops.cpp with the vendored LightSeq kernels",
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("hidden", [256, 1024])
def test_layer_norm_matches_torch(dtype, hidden):
    torch.manual_seed(0)
    x = torch.randn(5, 11, hidden, device="cuda", dtype=dtype)
    g = torch.rand(hidden, device="cuda", dtype=dtype)
    b = torch.randn(hidden, device="cuda", dtype=dtype)
    expected = torch.nn.functional.layer_norm(x.float(), (hidden,), g.float(), b.float(), 1e-8)
    torch.testing.assert_close(encoder.layer_norm(x, g, b).float(), expected, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("k_len", [20, 64, 200, 512])
def test_attention_probs_drop_padded_keys(dtype, k_len):
    torch.manual_seed(0)
    q, k = torch.randn(2, 2, 3, k_len, 32, device="cuda", dtype=dtype)
    lens = torch.tensor([k_len, k_len // 3], device="cuda")
    mask = encoder.padding_mask(lens, k_len, dtype)
    probs = encoder.attention_probs(q, k, mask)
    scores = (q.float() @ k.float().transpose(-1, -2)) / 32 ** 0.5
    expected = torch.softmax(scores + mask.float().view(2, 1, 1, k_len), dim=-1)
    torch.testing.assert_close(probs.float(), expected, atol=3e-3, rtol=2e-2)
    assert probs[1, :, :, k_len // 3:].abs().max().item() < 1e-3


def test_encoder_layer_runs_on_a_padded_batch():
    torch.manual_seed(0)
    hidden, heads = 256, 4
    p = {n: torch.randn(s, device="cuda", dtype=torch.float16) * 0.05 for n, s in {
        "qkv": (3 * hidden, hidden), "out": (hidden, hidden), "fc1": (4 * hidden, hidden), "fc2": (hidden, 4 * hidden),
    }.items()}
    for n in ("ln1", "ln2"):
        p[n + "_g"] = torch.ones(hidden, device="cuda", dtype=torch.float16)
        p[n + "_b"] = torch.zeros(hidden, device="cuda", dtype=torch.float16)
    x = torch.randn(2, 48, hidden, device="cuda", dtype=torch.float16)
    out = encoder.encoder_layer(x, torch.tensor([48, 30], device="cuda"), p, heads)
    assert out.shape == x.shape and torch.isfinite(out).all()
