import pytest
import torch

# The torch ops of csrc/bindings.cu, each named after the launcher it runs.
OPS = ("launch_rms_norm", "launch_rope_inplace", "launch_silu_and_mul")


def _built():
    return torch.cuda.is_available() and all(hasattr(torch.ops.engine_fi, op) for op in OPS)


pytestmark = pytest.mark.skipif(
    not _built(), reason="needs a GPU and the engine_fi extension built from csrc/ with nvcc"
)


def rotate_half_reference(x, positions, theta):
    half = x.shape[-1] // 2
    inv_freq = 1.0 / theta ** (torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angles = positions.float()[:, None] * inv_freq[None, :]
    cos, sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
    x1, x2 = x.float()[..., :half], x.float()[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("hidden", [4096, 5120, 100])
def test_launch_rms_norm_matches_torch(dtype, hidden):
    torch.manual_seed(0)
    x = torch.randn(33, hidden, device="cuda", dtype=dtype)
    w = torch.rand(hidden, device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    torch.ops.engine_fi.launch_rms_norm(out, x, w, 1e-6)
    xf = x.float()
    expected = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    torch.testing.assert_close(out.float(), expected, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_launch_rope_inplace_matches_rotate_half(head_dim):
    torch.manual_seed(0)
    q = torch.randn(9, 8, head_dim, device="cuda", dtype=torch.float16)
    k = torch.randn(9, 2, head_dim, device="cuda", dtype=torch.float16)
    indptr = torch.tensor([0, 4, 9], device="cuda", dtype=torch.int32)
    offsets = torch.tensor([17, 0], device="cuda", dtype=torch.int32)
    positions = torch.tensor([17, 18, 19, 20, 0, 1, 2, 3, 4], device="cuda")
    expected_q, expected_k = rotate_half_reference(q, positions, 1e4), rotate_half_reference(k, positions, 1e4)
    torch.ops.engine_fi.launch_rope_inplace(q, k, indptr, offsets, 1.0, 1e4)
    torch.testing.assert_close(q.float(), expected_q, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(k.float(), expected_k, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("d", [11008, 1000])
def test_launch_silu_and_mul_on_halves_of_one_buffer(d):
    torch.manual_seed(0)
    gate_up = torch.randn(19, 2 * d, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(19, d, device="cuda", dtype=torch.bfloat16)
    torch.ops.engine_fi.launch_silu_and_mul(out, gate_up)
    gate, up = gate_up.float().chunk(2, dim=-1)
    torch.testing.assert_close(out.float(), torch.nn.functional.silu(gate) * up, atol=2e-2, rtol=2e-2)
