"""pagedops against plain torch, and the engine's step end to end.

Runs on a CUDA device, or on the CPU under TRITON_INTERPRET=1.
"""

import torch

from engine import DecodeStep
from pagedops import add_rms_norm
from pagedops.kv_cache import copy_into_blocks_kernel, fill_paged_kv, plan_decode_pieces, plan_pieces, plan_prefill_pieces
from pagedops.norm import rms_norm, rms_norm_row_kernel
from pagedops.rotary import rotate_half_kernel, rotate_qk
from pagedops.sampling import draw_from_cumsum_kernel, sample_from_logits, sample_multinomial

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _rms_reference(x, w, eps=1e-6):
    x32 = x.float()
    return (w.float() * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps))).to(x.dtype)


def _rotary_reference(x, cos, sin, positions):
    c, s = cos[positions][:, None, :].float(), sin[positions][:, None, :].float()
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1).float()
    return (x.float() * c + rotated * s).to(x.dtype)


def _tables(max_pos, head_dim):
    inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, device=DEVICE).float() / head_dim))
    angles = torch.arange(max_pos, device=DEVICE).float()[:, None] * inv[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().half(), angles.sin().half()


def test_rms_norm_matches_torch_for_a_width_that_is_not_a_power_of_two():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 96, device=DEVICE, dtype=torch.float16)
    w = torch.randn(96, device=DEVICE, dtype=torch.float16)
    torch.testing.assert_close(rms_norm(x, w), _rms_reference(x, w), atol=2e-2, rtol=2e-2)
    assert rms_norm_row_kernel is not None


def test_add_rms_norm_returns_the_normed_sum_and_the_sum():
    x = torch.randn(4, 64, device=DEVICE)
    r = torch.randn(4, 64, device=DEVICE)
    w = torch.rand(64, device=DEVICE)
    normed, summed = add_rms_norm(x, r, w)
    torch.testing.assert_close(summed, x + r)
    torch.testing.assert_close(normed, _rms_reference(x + r, w), atol=1e-5, rtol=1e-5)


def test_rotate_qk_gathers_cos_and_sin_by_position_with_unequal_head_counts():
    torch.manual_seed(1)
    head_dim, tokens = 16, 37
    cos, sin = _tables(64, head_dim)
    positions = torch.randint(0, 64, (tokens,), device=DEVICE)
    q = torch.randn(tokens, 4, head_dim, device=DEVICE, dtype=torch.float16)
    k = torch.randn(tokens, 2, head_dim, device=DEVICE, dtype=torch.float16)
    q_out, k_out = rotate_qk(q, k, cos, sin, positions)
    torch.testing.assert_close(q_out, _rotary_reference(q, cos, sin, positions), atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(k_out, _rotary_reference(k, cos, sin, positions), atol=2e-3, rtol=2e-3)
    assert rotate_half_kernel is not None


def test_rotate_qk_in_place_writes_into_the_given_outputs():
    head_dim = 8
    cos, sin = _tables(16, head_dim)
    positions = torch.arange(5, device=DEVICE)
    q = torch.randn(5, 2, head_dim, device=DEVICE, dtype=torch.float16)
    k = torch.randn(5, 2, head_dim, device=DEVICE, dtype=torch.float16)
    expected_q = _rotary_reference(q, cos, sin, positions)
    q_out, _ = rotate_qk(q, k, cos, sin, positions, q_out=q, k_out=k)
    assert q_out.data_ptr() == q.data_ptr()
    torch.testing.assert_close(q, expected_q, atol=2e-3, rtol=2e-3)


def _paged_reference(cache, block_table, history, seq_length):
    """The tokens history..history+len of each sequence, read back from the cache."""
    block_size = cache.shape[1]
    out = []
    for row, h, n in zip(block_table.tolist(), history, seq_length.tolist()):
        for t in range(h, h + n):
            out.append(cache[row[t // block_size], t % block_size])
    return torch.stack(out)


def test_plan_prefill_pieces_splits_each_prompt_at_block_borders():
    seq_length = torch.tensor([5, 3], device=DEVICE)
    history = torch.tensor([2, 0], device=DEVICE)
    table = torch.tensor([[7, 3, 1], [2, 0, 4]], device=DEVICE)
    plan = plan_prefill_pieces(4, seq_length, table, history, DEVICE)
    assert plan["block_ids"].tolist() == [7, 3, 2]
    assert plan["slot_first"].tolist() == [2, 0, 0]
    assert plan["piece_len"].tolist() == [2, 3, 3]
    assert plan["src_first"].tolist() == [0, 2, 5]


def test_plan_decode_pieces_puts_each_token_after_its_history():
    plan = plan_decode_pieces(4, torch.tensor([0, 1], device=DEVICE), torch.tensor([1, 1], device=DEVICE),
                              torch.tensor([[7, 3], [2, 0]], device=DEVICE), torch.tensor([5, 3], device=DEVICE), DEVICE)
    assert plan["block_ids"].tolist() == [3, 2]
    assert plan["slot_first"].tolist() == [1, 3]


def test_fill_paged_kv_prefill_and_decode_land_where_the_block_table_says():
    torch.manual_seed(2)
    heads, head_dim, block_size = 2, 16, 4
    kc = torch.zeros(10, block_size, heads, head_dim, device=DEVICE, dtype=torch.float16)
    vc = torch.zeros_like(kc)
    table = torch.tensor([[7, 3, 1], [2, 0, 4]], device=DEVICE)
    seq_length = torch.tensor([5, 3], device=DEVICE)
    start_loc = torch.tensor([0, 5], device=DEVICE)
    keys = torch.randn(8, heads, head_dim, device=DEVICE, dtype=torch.float16)
    values = torch.randn_like(keys)
    fill_paged_kv(keys, values, kc, vc, start_loc, seq_length, table, [2, 0])
    torch.testing.assert_close(_paged_reference(kc, table, [2, 0], seq_length), keys)
    torch.testing.assert_close(_paged_reference(vc, table, [2, 0], seq_length), values)

    one = torch.ones(2, dtype=torch.long, device=DEVICE)
    new_k = torch.randn(2, heads, head_dim, device=DEVICE, dtype=torch.float16)
    fill_paged_kv(new_k, new_k, kc, vc, torch.tensor([0, 1], device=DEVICE), one, table, [7, 3])
    torch.testing.assert_close(_paged_reference(kc, table, [7, 3], one), new_k)
    assert plan_pieces(True, block_size, torch.tensor([0, 1], device=DEVICE), one, table, [7, 3], DEVICE)["piece_len"].tolist() == [1, 1]
    assert copy_into_blocks_kernel is not None


def test_sample_multinomial_picks_the_only_likely_token_and_follows_the_ids():
    probs = torch.zeros(3, 100, device=DEVICE)
    probs[0, 70] = probs[1, 3] = probs[2, 99] = 1.0
    seeds = torch.tensor([1, 2, 3], device=DEVICE)
    offsets = torch.tensor([0, 5, 9], device=DEVICE)
    assert sample_multinomial(probs, seeds, offsets).tolist() == [70, 3, 99]
    ids = torch.arange(100, device=DEVICE).flip(0).expand(3, 100)
    assert sample_multinomial(probs, seeds, offsets, ids).tolist() == [29, 96, 0]
    assert draw_from_cumsum_kernel is not None


def test_sample_multinomial_frequencies_follow_the_probabilities():
    n = 2000
    probs = torch.tensor([[0.5, 0.3, 0.2]], device=DEVICE).expand(n, 3).contiguous()
    picked = sample_multinomial(probs, torch.arange(n, device=DEVICE), torch.zeros(n, dtype=torch.long, device=DEVICE))
    share = torch.bincount(picked, minlength=3).float() / n
    torch.testing.assert_close(share.cpu(), torch.tensor([0.5, 0.3, 0.2]), atol=0.05, rtol=0)


def test_sample_from_logits_returns_the_argmax_when_it_dominates():
    logits = torch.full((2, 10), -30.0, device=DEVICE)
    logits[0, 4] = logits[1, 8] = 30.0
    got = sample_from_logits(logits, 1.0, torch.tensor([5, 6], device=DEVICE), torch.zeros(2, dtype=torch.long, device=DEVICE))
    assert got.tolist() == [4, 8]


def test_decode_step_rotates_fills_the_cache_and_samples():
    torch.manual_seed(4)
    width, n_heads, n_kv, head_dim, block_size, vocab = 32, 4, 2, 8, 4, 12
    dt = dict(device=DEVICE, dtype=torch.float16)
    wq = torch.randn(width, n_heads * head_dim, **dt) * 0.1
    wk = torch.randn(width, n_kv * head_dim, **dt) * 0.1
    wv = torch.randn(width, n_kv * head_dim, **dt) * 0.1
    head = torch.randn(width, vocab, **dt)
    step = DecodeStep(wq, wk, wv, head, torch.ones(width, **dt), n_heads, n_kv)
    hidden = torch.randn(6, width, **dt)
    cos, sin = _tables(32, head_dim)
    positions = torch.tensor([0, 1, 2, 3, 4, 0], device=DEVICE)
    kc = torch.zeros(8, block_size, n_kv, head_dim, **dt)
    vc = torch.zeros_like(kc)
    table = torch.tensor([[5, 1], [6, 2]], device=DEVICE)
    seq_length = torch.tensor([5, 1], device=DEVICE)
    start_loc = torch.tensor([0, 5], device=DEVICE)
    q, tokens = step(hidden, cos, sin, positions, kc, vc, start_loc, seq_length, table, [0, 0],
                     torch.tensor([1, 2], device=DEVICE), torch.zeros(2, dtype=torch.long, device=DEVICE))
    x = _rms_reference(hidden, step.norm_weight)
    k = _rotary_reference((x @ wk).view(6, n_kv, head_dim), cos, sin, positions)
    torch.testing.assert_close(q, _rotary_reference((x @ wq).view(6, n_heads, head_dim), cos, sin, positions),
                               atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(_paged_reference(kc, table, [0, 0], seq_length), k, atol=2e-2, rtol=2e-2)
    assert tokens.shape == (2,) and bool(((tokens >= 0) & (tokens < vocab)).all())
