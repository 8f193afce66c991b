import pytest
import torch

from engine import attention_block

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_exl") or not hasattr(torch.ops.engine_exl, "rms_norm"),
    reason="needs a GPU and the engine_exl extension built from csrc/exl_ops.cu with the vendored ExLlamaV2 kernels",
)


def rotate_half_reference(x, positions, theta=1e4):
    half = x.shape[-1] // 2
    inv_freq = 1.0 / theta ** (torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angles = positions.float()[:, None] * inv_freq[None, :]
    cos, sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
    x1, x2 = x.float()[..., :half], x.float()[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def tables(max_positions, head_dim, theta=1e4):
    half = head_dim // 2
    inv_freq = 1.0 / theta ** (torch.arange(half, device="cuda", dtype=torch.float32) / half)
    angles = torch.arange(max_positions, device="cuda").float()[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.sin().half(), angles.cos().half()


def test_rms_norm_launcher_matches_torch():
    torch.manual_seed(0)
    x = torch.randn(37, 4096, device="cuda", dtype=torch.float16)
    w = torch.rand(4096, device="cuda", dtype=torch.float16)
    xf = x.float()
    expected = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    torch.testing.assert_close(attention_block.input_norm(x, w).float(), expected, atol=2e-2, rtol=2e-2)


def test_rope_launcher_with_one_and_per_sequence_past_lengths():
    torch.manual_seed(0)
    sin, cos = tables(64, 128)
    x = torch.randn(2, 5, 8, 128, device="cuda", dtype=torch.float16)
    expected = torch.stack([rotate_half_reference(x[0], torch.arange(3, 8, device="cuda")),
                            rotate_half_reference(x[1], torch.arange(3, 8, device="cuda"))])
    torch.testing.assert_close(attention_block.rotate(x.clone(), sin, cos, 3).float(), expected, atol=2e-2, rtol=2e-2)
    lens = torch.tensor([3, 10], device="cuda", dtype=torch.int32)
    expected_1 = rotate_half_reference(x[1], torch.arange(10, 15, device="cuda"))
    got = attention_block.rotate(x.clone(), sin, cos, -1, lens)
    torch.testing.assert_close(got[1].float(), expected_1, atol=2e-2, rtol=2e-2)


def test_fp8_cache_store_and_load_keep_the_upper_byte_of_each_half():
    torch.manual_seed(0)
    values = torch.randn(2, 16, 4, 64, device="cuda", dtype=torch.float16)
    cache = torch.zeros(values.shape, device="cuda", dtype=torch.uint8)
    attention_block.store_kv(values, cache, 3, 5)
    loaded = torch.zeros_like(values)
    attention_block.load_kv(cache, loaded, 3, 5)
    truncated = (values.view(torch.int16) & ~0xFF).view(torch.float16)
    torch.testing.assert_close(loaded[:, 3:8], truncated[:, 3:8], atol=0, rtol=0)
    assert torch.count_nonzero(loaded[:, :3]) == 0
