import pytest
import torch

from engine import attention_block

# The torch ops of csrc/bindings.cu, each named after the launcher it runs.
OPS = ("launch_rms_norm", "launch_rope_neox", "launch_store_e5m2", "launch_load_e5m2", "launch_store_e5m2_kv")


def _built():
    return torch.cuda.is_available() and all(hasattr(torch.ops.engine_exl, op) for op in OPS)


pytestmark = pytest.mark.skipif(
    not _built(), reason="needs a GPU and the engine_exl extension built from csrc/ with nvcc"
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


def truncated_to_e5m2(x):
    return (x.view(torch.int16) & ~0xFF).view(torch.float16)


def test_launch_rms_norm_matches_torch_and_clamps_infinities():
    """4096 columns: launch_rms_norm runs the four-columns-a-thread instance."""
    torch.manual_seed(0)
    x = torch.randn(37, 4096, device="cuda", dtype=torch.float16)
    x[3, 5] = float("inf")
    w = torch.rand(4096, device="cuda", dtype=torch.float16)
    xf = x.float().clamp(-65504.0, 65504.0)
    expected = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    got = attention_block.input_norm(x, w).float()
    torch.testing.assert_close(got[torch.arange(37) != 3], expected[torch.arange(37) != 3], atol=2e-2, rtol=2e-2)
    assert torch.isfinite(got[3]).all()


def test_launch_rope_neox_with_one_and_per_sequence_past_lengths():
    torch.manual_seed(0)
    sin, cos = tables(64, 128)
    x = torch.randn(2, 5, 8, 128, device="cuda", dtype=torch.float16)
    positions = torch.arange(3, 8, device="cuda")
    expected = torch.stack([rotate_half_reference(x[0], positions), rotate_half_reference(x[1], positions)])
    torch.testing.assert_close(attention_block.rotate(x.clone(), sin, cos, 3).float(), expected, atol=2e-2, rtol=2e-2)
    lens = torch.tensor([3, 10], device="cuda", dtype=torch.int32)
    got = attention_block.rotate(x.clone(), sin, cos, -1, lens)
    expected_1 = rotate_half_reference(x[1], torch.arange(10, 15, device="cuda"))
    torch.testing.assert_close(got[1].float(), expected_1, atol=2e-2, rtol=2e-2)


def test_launch_store_and_load_e5m2_keep_the_upper_byte_of_each_half():
    torch.manual_seed(0)
    values = torch.randn(2, 16, 4, 64, device="cuda", dtype=torch.float16)
    cache = torch.zeros(values.shape, device="cuda", dtype=torch.uint8)
    attention_block.store(values, cache, 3, 5)
    loaded = attention_block.load(cache, torch.zeros_like(values), 3, 5)
    torch.testing.assert_close(loaded[:, 3:8], truncated_to_e5m2(values)[:, 3:8], atol=0, rtol=0)
    assert torch.count_nonzero(loaded[:, :3]) == 0 and torch.count_nonzero(loaded[:, 8:]) == 0


def test_launch_store_e5m2_kv_writes_both_caches_like_two_single_stores():
    torch.manual_seed(0)
    k = torch.randn(2, 16, 4, 64, device="cuda", dtype=torch.float16)
    v = torch.randn_like(k)
    k_cache, v_cache = torch.zeros(k.shape, device="cuda", dtype=torch.uint8), torch.zeros(k.shape, device="cuda", dtype=torch.uint8)
    attention_block.store_kv(k, v, k_cache, v_cache, 0, 16)
    k_ref, v_ref = torch.zeros_like(k_cache), torch.zeros_like(v_cache)
    attention_block.store(k, k_ref, 0, 16)
    attention_block.store(v, v_ref, 0, 16)
    assert torch.equal(k_cache, k_ref) and torch.equal(v_cache, v_ref)
