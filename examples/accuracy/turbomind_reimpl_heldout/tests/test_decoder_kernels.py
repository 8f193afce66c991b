import pytest
import torch

# The torch ops of csrc/bindings.cpp, each named after the launcher it runs.
OPS = ("launch_rms_norm", "launch_gated_silu", "launch_paged_kv_write", "top_p_sort", "launch_top_p_cut")


def _built():
    return torch.cuda.is_available() and all(hasattr(torch.ops.dec_ops, op) for op in OPS)


pytestmark = pytest.mark.skipif(
    not _built(), reason="needs a GPU and the dec_ops extension built from csrc/ with nvcc"
)


def test_launch_rms_norm_matches_torch():
    torch.manual_seed(0)
    x = torch.randn(33, 4096, device="cuda", dtype=torch.float16)
    w = torch.rand(4096, device="cuda", dtype=torch.float16)
    out = torch.empty_like(x)
    torch.ops.dec_ops.launch_rms_norm(out, x, w, 1e-6)
    xf = x.float()
    expected = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).half() * w
    torch.testing.assert_close(out, expected, atol=1e-2, rtol=1e-2)


def test_launch_gated_silu_on_halves_of_one_buffer():
    torch.manual_seed(0)
    gate_up = torch.randn(19, 2 * 1024, device="cuda", dtype=torch.bfloat16)
    act, up = gate_up[:, :1024], gate_up[:, 1024:]
    expected = torch.nn.functional.silu(act.float()) * up.float()
    torch.ops.dec_ops.launch_gated_silu(act, up)
    torch.testing.assert_close(act.float(), expected, atol=3e-2, rtol=3e-2)


def test_launch_paged_kv_write_rotates_keys_at_their_position():
    torch.manual_seed(0)
    heads, dim, block_len, history, new = 2, 128, 16, 5, 7
    k = torch.randn(new, heads, dim, device="cuda", dtype=torch.float16)
    v = torch.randn(new, heads, dim, device="cuda", dtype=torch.float16)
    block = torch.zeros(heads, 2, block_len, dim, device="cuda", dtype=torch.float16)
    ptrs = torch.tensor([block.data_ptr()], dtype=torch.int64, device="cuda")
    cu_q = torch.tensor([0, new], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, history + new], dtype=torch.int32, device="cuda")
    cu_blocks = torch.tensor([0, 1], dtype=torch.int32, device="cuda")
    base = torch.tensor([10000.0], device="cuda")
    torch.ops.dec_ops.launch_paged_kv_write(ptrs, k, v, cu_q, cu_k, cu_blocks, base, dim, 1.0, block_len, 0, new)

    pos = torch.arange(history, history + new, device="cuda", dtype=torch.float32)[:, None]
    inv_freq = 10000.0 ** (-torch.arange(0, dim, 2, device="cuda", dtype=torch.float32) / dim)
    cos, sin = torch.cos(pos * inv_freq)[:, None], torch.sin(pos * inv_freq)[:, None]
    kf = k.float()
    x0, x1 = kf[..., 0::2], kf[..., 1::2]
    rotated = torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)
    written = block[:, :, history:history + new].permute(2, 0, 1, 3)  # (new, heads, k/v, dim)
    torch.testing.assert_close(written[:, :, 0].float(), rotated, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(written[:, :, 1], v)


def test_top_p_sort_and_cut_keep_the_smallest_nucleus():
    probs = torch.tensor([[0.1, 0.5, 0.3, 0.1], [0.25, 0.25, 0.25, 0.25]], device="cuda")
    sorted_probs = torch.empty_like(probs)
    sorted_ids = torch.empty(probs.shape, dtype=torch.int32, device="cuda")
    kept = torch.full((2,), 4, dtype=torch.int32, device="cuda")
    top_ks = torch.zeros(2, dtype=torch.int32, device="cuda")
    top_ps = torch.tensor([0.7, 1.0], device="cuda")
    torch.ops.dec_ops.top_p_sort(probs, sorted_probs, sorted_ids, kept, top_ks, top_ps, 4)
    torch.ops.dec_ops.launch_top_p_cut(sorted_probs, sorted_ids, kept, top_ps, 4)
    assert kept.tolist() == [2, 4]
    assert sorted_ids[0, :2].tolist() == [1, 2]
    torch.testing.assert_close(sorted_probs[0, :2], torch.tensor([0.625, 0.375], device="cuda"))
