import pytest
import torch

from engine import decoder_layer

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_fi") or not hasattr(torch.ops.engine_fi, "rms_norm"),
    reason="needs a GPU and the engine_fi extension built from csrc/fi_ops.cu with the vendored FlashInfer headers",
)


def rotate_half_reference(x, positions, theta):
    half = x.shape[-1] // 2
    inv_freq = 1.0 / theta ** (torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angles = positions.float()[:, None] * inv_freq[None, :]
    cos, sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
    x1, x2 = x.float()[..., :half], x.float()[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def test_input_norm_matches_torch():
    torch.manual_seed(0)
    x = torch.randn(37, 4096, device="cuda", dtype=torch.float16)
    w = torch.rand(4096, device="cuda", dtype=torch.float16)
    xf = x.float()
    expected = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    torch.testing.assert_close(decoder_layer.input_norm(x, w).float(), expected, atol=2e-2, rtol=2e-2)


def test_rotate_qk_matches_rotate_half():
    torch.manual_seed(0)
    q = torch.randn(7, 8, 128, device="cuda", dtype=torch.float16)
    k = torch.randn(7, 2, 128, device="cuda", dtype=torch.float16)
    indptr = torch.tensor([0, 3, 7], device="cuda", dtype=torch.int32)
    offsets = torch.tensor([5, 0], device="cuda", dtype=torch.int32)
    positions = torch.tensor([5, 6, 7, 0, 1, 2, 3], device="cuda")
    expected_q, expected_k = rotate_half_reference(q, positions, 1e4), rotate_half_reference(k, positions, 1e4)
    decoder_layer.rotate_qk(q, k, indptr, offsets)
    torch.testing.assert_close(q.float(), expected_q, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(k.float(), expected_k, atol=2e-2, rtol=2e-2)


def test_mlp_gate_matches_torch():
    torch.manual_seed(0)
    gate_up = torch.randn(19, 2 * 11008, device="cuda", dtype=torch.float16)
    gate, up = gate_up.float().chunk(2, dim=-1)
    expected = torch.nn.functional.silu(gate) * up
    torch.testing.assert_close(decoder_layer.mlp_gate(gate_up).float(), expected, atol=2e-2, rtol=2e-2)
