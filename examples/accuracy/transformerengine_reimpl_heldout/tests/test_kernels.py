import pytest
import torch

from engine import decoder_layer

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_kernels") or not hasattr(torch.ops.engine_kernels, "rope_forward"),
    reason="needs a GPU and the engine_kernels extension built from csrc/ (rope.cu, gated_silu.cu, bindings.cpp)",
)


def _reference_angles(max_positions, rot_dim, theta=10000.0):
    inv_freq = 1.0 / (theta ** (torch.arange(0, rot_dim, 2, device="cuda", dtype=torch.float32) / rot_dim))
    angles = torch.outer(torch.arange(max_positions, device="cuda", dtype=torch.float32), inv_freq)
    return torch.cat([angles, angles], dim=-1)


def _rotate_half(x, angles):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * angles.cos() + rotated * angles.sin()


def test_rope_angles_match_the_inverse_frequency_table():
    torch.testing.assert_close(decoder_layer.rotary_angles(64, 128), _reference_angles(64, 128), rtol=1e-4, atol=1e-3)


def test_launch_rope_forward_rotates_each_packed_token_at_its_position():
    torch.manual_seed(0)
    cu = torch.tensor([0, 5, 12], dtype=torch.int32, device="cuda")
    q = torch.randn(12, 4, 64, device="cuda", dtype=torch.float16)
    angles = _reference_angles(16, 64)
    rq, _ = decoder_layer.rotate_packed(q, q.clone(), cu, angles)
    positions = torch.cat([torch.arange(5), torch.arange(7)]).cuda()
    torch.testing.assert_close(rq.float(), _rotate_half(q.float(), angles[positions][:, None, :]), atol=2e-2, rtol=2e-2)


def test_launch_rope_forward_offsets_decode_tokens_and_passes_the_unrotated_tail():
    cu = torch.tensor([0, 1, 2], dtype=torch.int32, device="cuda")
    k = torch.randn(2, 2, 96, device="cuda", dtype=torch.bfloat16)
    angles = _reference_angles(32, 64)
    starts = torch.tensor([7, 20], dtype=torch.int32, device="cuda")
    _, rk = decoder_layer.rotate_packed(k.clone(), k, cu, angles, starts)
    expected = _rotate_half(k[..., :64].float(), angles[starts.long()][:, None, :])
    torch.testing.assert_close(rk[..., :64].float(), expected, atol=3e-2, rtol=3e-2)
    torch.testing.assert_close(rk[..., 64:], k[..., 64:])


@pytest.mark.parametrize("inter", [256, 250])  # vectorised and scalar launches of launch_gated_silu
def test_swiglu_gates_the_up_half_with_silu_of_the_first(inter):
    gate_up = torch.randn(9, 2 * inter, device="cuda", dtype=torch.bfloat16)
    out = torch.ops.engine_kernels.swiglu(gate_up)
    gate, up = gate_up.float().chunk(2, dim=-1)
    torch.testing.assert_close(out.float(), torch.nn.functional.silu(gate) * up, atol=3e-2, rtol=3e-2)
