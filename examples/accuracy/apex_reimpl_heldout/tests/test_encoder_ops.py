import pytest
import torch

# The torch ops of csrc/bindings.cpp, each named after the host function it runs.
OPS = ("masked_softmax", "key_padding_mask", "affine_layer_norm")


def _built():
    return torch.cuda.is_available() and hasattr(torch.ops, "engine_apex") and all(
        hasattr(torch.ops.engine_apex, op) for op in OPS
    )


pytestmark = pytest.mark.skipif(
    not _built(), reason="needs a GPU and the engine_apex extension built from csrc/ with nvcc"
)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("k_len", [16, 100, 512, 2048])
def test_masked_softmax_matches_torch(dtype, k_len):
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 32, k_len, device="cuda", dtype=dtype)
    mask = (torch.rand(2, 1, 32, k_len, device="cuda") < 0.3).to(torch.uint8)
    probs = torch.ops.engine_apex.masked_softmax(scores, mask, 0.125)
    expected = torch.softmax((scores.float() * 0.125).masked_fill(mask.bool(), -10000.0), dim=-1)
    torch.testing.assert_close(probs.float(), expected, atol=2e-3, rtol=2e-2)


def test_masked_softmax_broadcasts_one_mask_over_the_batch():
    torch.manual_seed(0)
    scores = torch.randn(4, 2, 16, 64, device="cuda", dtype=torch.float16)
    causal = torch.triu(torch.ones(16, 64, device="cuda", dtype=torch.uint8), diagonal=1).view(1, 1, 16, 64)
    probs = torch.ops.engine_apex.masked_softmax(scores, causal, 1.0)
    expected = torch.softmax(scores.float().masked_fill(causal.bool(), -10000.0), dim=-1)
    torch.testing.assert_close(probs.float(), expected, atol=2e-3, rtol=2e-2)


def test_key_padding_mask_marks_keys_past_each_length():
    mask = torch.ops.engine_apex.key_padding_mask(torch.tensor([3, 5], dtype=torch.int32, device="cuda"), 4, 5)
    assert mask.shape == (2, 1, 4, 5)
    assert mask[0, 0, 2].tolist() == [0, 0, 0, 1, 1]
    assert mask[1].sum().item() == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_affine_layer_norm_matches_torch(dtype):
    torch.manual_seed(0)
    x = torch.randn(3, 37, 1024, device="cuda", dtype=dtype)
    w = torch.rand(1024, device="cuda", dtype=dtype)
    b = torch.randn(1024, device="cuda", dtype=dtype)
    y, mean, rstd = torch.ops.engine_apex.affine_layer_norm(x, w, b, 1e-5)
    expected = torch.nn.functional.layer_norm(x.float(), (1024,), w.float(), b.float(), 1e-5)
    torch.testing.assert_close(y.float(), expected, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(mean, x.float().mean(-1).flatten(), atol=1e-4, rtol=1e-4)
    assert rstd.shape == (3 * 37,)


def test_encoder_layer_runs_on_a_padded_batch():
    from engine import encoder

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
