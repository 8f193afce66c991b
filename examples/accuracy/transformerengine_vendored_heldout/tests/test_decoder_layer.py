import pytest
import torch

from engine import decoder_layer

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_te") or not hasattr(torch.ops.engine_te, "rope_forward"),
    reason="needs a GPU and the engine_te extension built from csrc/te_ops.cu with the vendored Transformer Engine kernels",
)


def _rotate_half(x, angles):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * angles.cos() + rotated * angles.sin()


def test_rope_forward_rotates_each_packed_token_at_its_position():
    torch.manual_seed(0)
    cu = torch.tensor([0, 5, 12], dtype=torch.int32, device="cuda")
    q = torch.randn(12, 4, 64, device="cuda", dtype=torch.float16)
    angles = decoder_layer.rotary_angles(16, 64)
    rq, _ = decoder_layer.rotate_packed(q, q.clone(), cu, angles)
    positions = torch.cat([torch.arange(5), torch.arange(7)]).cuda()
    expected = _rotate_half(q.float(), angles[positions][:, None, :])
    torch.testing.assert_close(rq.float(), expected, atol=2e-2, rtol=2e-2)


def test_rope_forward_offsets_decode_tokens_by_start_position():
    cu = torch.tensor([0, 1, 2], dtype=torch.int32, device="cuda")
    k = torch.randn(2, 2, 64, device="cuda", dtype=torch.float16)
    angles = decoder_layer.rotary_angles(32, 64)
    starts = torch.tensor([7, 20], dtype=torch.int32, device="cuda")
    _, rk = decoder_layer.rotate_packed(k.clone(), k, cu, angles, starts)
    expected = _rotate_half(k.float(), angles[starts.long()][:, None, :])
    torch.testing.assert_close(rk.float(), expected, atol=2e-2, rtol=2e-2)


def test_swiglu_gates_the_up_half_with_silu_of_the_first():
    gate_up = torch.randn(9, 2 * 256, device="cuda", dtype=torch.bfloat16)
    out = torch.ops.engine_te.swiglu(gate_up)
    gate, up = gate_up.float().chunk(2, dim=-1)
    torch.testing.assert_close(out.float(), torch.nn.functional.silu(gate) * up, atol=3e-2, rtol=3e-2)
