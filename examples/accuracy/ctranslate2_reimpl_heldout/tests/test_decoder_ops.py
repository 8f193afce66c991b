import pytest
import torch

from engine import decoder

# The torch ops of csrc/bindings.cpp: layer_norm runs layer_norm_forward
# (layer_norm_rows_kernel), softmax runs softmax_forward (launch_softmax_rows,
# softmax_rows_kernel over thread_reduce, block_allreduce, thread_apply and
# pick_block_size), scale_logits the engine's own temperature kernel.
OPS = ("layer_norm", "softmax", "scale_logits")

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available()
    or not hasattr(torch.ops, "engine_ct2")
    or not all(hasattr(torch.ops.engine_ct2, op) for op in OPS),
    reason="needs a GPU and the engine_ct2 extension built from csrc/",
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("depth", [64, 512, 4096])
def test_layer_norm_forward_matches_torch(dtype, depth):
    torch.manual_seed(0)
    x = torch.randn(7, 3, depth, device="cuda", dtype=dtype)
    g = torch.rand(depth, device="cuda", dtype=dtype)
    b = torch.randn(depth, device="cuda", dtype=dtype)
    expected = torch.nn.functional.layer_norm(x.float(), (depth,), g.float(), b.float(), 1e-4)
    torch.testing.assert_close(decoder.layer_norm(x, g, b).float(), expected, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("cols", [1, 31, 64, 1000, 5003])
def test_softmax_forward_matches_torch(dtype, cols):
    torch.manual_seed(0)
    x = torch.randn(9, cols, device="cuda", dtype=dtype) * 4
    torch.testing.assert_close(decoder.softmax(x).float(), torch.softmax(x.float(), -1), atol=2e-3, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_softmax_forward_zeroes_past_lengths(dtype):
    torch.manual_seed(0)
    x = torch.randn(4, 300, device="cuda", dtype=dtype)
    lens = torch.tensor([300, 1, 77, 200], device="cuda", dtype=torch.int32)
    y = decoder.softmax(x, lens).float()
    for r, n in enumerate(lens.tolist()):
        torch.testing.assert_close(y[r, :n], torch.softmax(x[r, :n].float(), -1), atol=2e-3, rtol=1e-2)
        if n < 300:
            assert y[r, n:].abs().max().item() == 0


def test_scale_logits_and_next_token_probs():
    torch.manual_seed(0)
    model, vocab = 256, 1000
    p = {"ln_g": torch.ones(model, device="cuda"), "ln_b": torch.zeros(model, device="cuda"),
         "embed": torch.randn(vocab, model, device="cuda") * 0.05}
    hidden = torch.randn(3, model, device="cuda")
    probs = decoder.next_token_probs(hidden, p, temperature=0.5)
    logits = torch.nn.functional.layer_norm(hidden, (model,), eps=1e-4) @ p["embed"].t()
    torch.testing.assert_close(probs, torch.softmax(logits / 0.5, -1), atol=1e-4, rtol=1e-3)


def test_decoder_step_attends_only_to_cached_keys():
    torch.manual_seed(0)
    batch, heads, d, max_len = 2, 4, 32, 40
    model = heads * d
    p = {n: torch.randn(model, model, device="cuda") * 0.05 for n in ("q", "out")}
    p.update(ln1_g=torch.ones(model, device="cuda"), ln1_b=torch.zeros(model, device="cuda"))
    x = torch.randn(batch, model, device="cuda")
    k, v = torch.randn(2, batch, heads, max_len, d, device="cuda")
    lens = torch.tensor([max_len, 9], device="cuda")
    out = decoder.decoder_step(x, k, v, lens, p, heads)
    k2, v2 = k.clone(), v.clone()
    k2[1, :, 9:], v2[1, :, 9:] = 1e3, 1e3
    torch.testing.assert_close(decoder.decoder_step(x, k2, v2, lens, p, heads), out)
