import pytest
import torch

from engine import encoder

OPS = ("masked_softmax", "affine_layer_norm")

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available()
    or not hasattr(torch.ops, "engine_apexv")
    or not all(hasattr(torch.ops.engine_apexv, op) for op in OPS),
    reason="needs a GPU and the engine_apexv extension built from csrc/apex_ops.cpp with the vendored Apex kernels",
)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_attention_probs_drop_padded_keys(dtype):
    torch.manual_seed(0)
    q, k = torch.randn(2, 2, 4, 32, 64, device="cuda", dtype=dtype)
    lens = torch.tensor([32, 9], device="cuda")
    probs = encoder.attention_probs(q, k, encoder.padding_mask(lens, 32, 32))
    scores = (q.float() @ k.float().transpose(-1, -2)) / 8.0
    keys = torch.arange(32, device="cuda")
    expected = torch.softmax(scores.masked_fill((keys >= lens.view(-1, 1, 1, 1)), -10000.0), dim=-1)
    torch.testing.assert_close(probs.float(), expected, atol=3e-3, rtol=2e-2)
    assert probs[1, :, :, 9:].abs().max().item() < 1e-3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_layer_norm_matches_torch(dtype):
    torch.manual_seed(0)
    x = torch.randn(5, 33, 768, device="cuda", dtype=dtype)
    w = torch.rand(768, device="cuda", dtype=dtype)
    b = torch.randn(768, device="cuda", dtype=dtype)
    expected = torch.nn.functional.layer_norm(x.float(), (768,), w.float(), b.float(), 1e-5)
    torch.testing.assert_close(encoder.layer_norm(x, w, b).float(), expected, atol=2e-2, rtol=2e-2)


def test_encoder_layer_runs_on_a_padded_batch():
    torch.manual_seed(0)
    hidden, heads = 256, 4
    p = {n: torch.randn(s, device="cuda", dtype=torch.float16) * 0.05 for n, s in {
        "qkv": (3 * hidden, hidden), "out": (hidden, hidden), "fc1": (4 * hidden, hidden), "fc2": (hidden, 4 * hidden),
    }.items()}
    for n in ("ln1", "ln2"):
        p[n + "_w"] = torch.ones(hidden, device="cuda", dtype=torch.float16)
        p[n + "_b"] = torch.zeros(hidden, device="cuda", dtype=torch.float16)
    x = torch.randn(2, 32, hidden, device="cuda", dtype=torch.float16)
    out = encoder.encoder_layer(x, torch.tensor([32, 20], device="cuda"), p, heads)
    assert out.shape == x.shape and torch.isfinite(out).all()
