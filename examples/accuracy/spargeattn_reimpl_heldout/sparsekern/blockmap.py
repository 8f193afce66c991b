"""Block-map prediction by mean similarity (Triton kernels and launchers).

Each tile of Q (BLKQ rows) and K (BLKK rows) is pooled to its mean and
judged self-similar when the mean cosine similarity of its rows exceeds a
per-head threshold; the same pass quantises the tile to int8 (K after its
mean over the sequence is subtracted). Pooled scores select, per query
tile, the key tiles whose softmax mass reaches a per-head CDF threshold;
tiles that are not self-similar are always kept. Rows of a partial tile that
lie past the length are zero and take no part in the similarity."""

import torch
import triton
import triton.language as tl


# portq: ports spargeattn:spas_sage_attn/utils.py::hyperparameter_check @97fac836b3
# portq: not-carried spargeattn:spas_sage_attn/utils.py::precision_metric -- a tuning metric, not on the inference path
def per_head(value, heads, device):
    """A scalar or (heads,) hyperparameter as a (heads,) fp32 tensor."""
    if isinstance(value, (int, float)):
        return torch.full((heads,), float(value), device=device)
    if isinstance(value, torch.Tensor):
        assert value.dim() <= 1, "a per-head hyperparameter is a scalar or a 1-D tensor"
        if value.dim() == 0:
            return torch.full((heads,), value.item(), device=device)
        assert value.numel() == heads, f"expected {heads} values, got {value.numel()}"
        return value.to(device)
    raise ValueError("a hyperparameter is a float or a tensor")


# portq: ports spargeattn:spas_sage_attn/utils.py::triton_block_map_to_lut_kernel @97fac836b3
@triton.jit
def _map_to_lut_kernel(block_map, lut, counts, n_kblocks):
    b, h, qb = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    H, Q = tl.num_programs(1), tl.num_programs(2)
    row = (b * H + h) * Q + qb
    taken = 0
    last = 0
    for j in range(n_kblocks):
        if tl.load(block_map + row * n_kblocks + j):
            tl.store(lut + row * n_kblocks + taken, j - last)
            taken += 1
            last = j
    tl.store(counts + row, taken)


# portq: ports spargeattn:spas_sage_attn/utils.py::block_map_lut_triton @97fac836b3
# portq: not-carried spargeattn:spas_sage_attn/utils.py::block_map_lut -- the torch version of the same table
# portq: not-carried spargeattn:spas_sage_attn/utils.py::block_map_to_mask -- a debugging expansion
def block_map_to_lut(block_map):
    """Per query tile, the selected key tiles as deltas from the previous
    one (the first from 0), and how many there are."""
    assert block_map.dim() == 4 and block_map.is_contiguous()
    B, H, Q, K = block_map.shape
    lut = torch.zeros((B, H, Q, K), dtype=torch.int32, device=block_map.device)
    counts = torch.zeros((B, H, Q), dtype=torch.int32, device=block_map.device)
    _map_to_lut_kernel[(B, H, Q)](block_map, lut, counts, K)
    return lut, counts


# portq: ports spargeattn:spas_sage_attn/utils.py::triton_bmm_pool_sim_simmean_fuse_quant @97fac836b3
# portq: not-carried spargeattn:spas_sage_attn/utils.py::triton_bmm_pool_sim_simmean -- the unfused variant; the engine always quantises in the same pass
@triton.jit
def _pool_sim_quant_kernel(x, x_mean, pooled, similar, codes, scales, sim_threshold,
                           N: tl.constexpr, D: tl.constexpr, TILE: tl.constexpr,
                           SUB_MEAN: tl.constexpr):
    b, h, t = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    H, T = tl.num_programs(1), tl.num_programs(2)
    base = (b * H + h) * N * D + t * TILE * D
    rows = tl.arange(0, TILE)[:, None]
    cols = tl.arange(0, D)[None, :]
    inside = (t * TILE + rows) < N
    tile = tl.load(x + base + rows * D + cols, mask=inside, other=0.0)
    if SUB_MEAN:
        tile -= tl.load(x_mean + (b * H + h) * D + tl.arange(0, D))[None, :]
        tile = tl.where(inside, tile, 0.0)
    count = tl.minimum(N - t * TILE, TILE)
    f32 = tile.to(tl.float32)
    mean = tl.sum(f32, axis=0) / count
    norm = tl.sqrt(tl.sum(f32 * f32, axis=1, keep_dims=True))
    unit = (f32 / tl.where(norm > 0, norm, 1.0)).to(tl.float16)
    gram = tl.dot(unit, tl.trans(unit))
    is_similar = (tl.sum(gram).to(tl.float32) / (count * count)) > tl.load(sim_threshold + h)
    tl.store(pooled + ((b * H + h) * T + t) * D + tl.arange(0, D), mean)
    tl.store(similar + (b * H + h) * T + t, is_similar)
    step = tl.math.div_rn(tl.max(tl.abs(f32)), 127.0) + 0.0000001
    q = tl.math.div_rn(f32, step)
    q += 0.5 * tl.where(q >= 0, 1, -1)
    tl.store(codes + base + rows * D + cols, q.to(tl.int8), mask=inside)
    tl.store(scales + (b * H + h) * T + t, step)


# portq: ports spargeattn:spas_sage_attn/utils.py::get_pool_sim_triton_simmean_fuse_quant @97fac836b3
# portq: not-carried spargeattn:spas_sage_attn/utils.py::get_pool_sim_triton_simmean -- the unfused variant
def pool_similarity_quant(x, x_mean, tile, sim_threshold):
    """Pooled tiles (B, H, T, D), self-similarity flags (B, H, T), int8
    codes of x (minus x_mean when given) and one scale per tile."""
    x = x.contiguous()
    B, H, N, D = x.shape
    T = triton.cdiv(N, tile)
    pooled = torch.empty((B, H, T, D), device=x.device, dtype=x.dtype)
    similar = torch.empty((B, H, T), device=x.device, dtype=torch.bool)
    codes = torch.empty(x.shape, device=x.device, dtype=torch.int8)
    scales = torch.empty((B, H, T), device=x.device, dtype=torch.float32)
    _pool_sim_quant_kernel[(B, H, T)](x, x_mean, pooled, similar, codes, scales, sim_threshold,
                                      N=N, D=D, TILE=tile, SUB_MEAN=x_mean is not None)
    return pooled, similar, codes, scales


# portq: ports spargeattn:spas_sage_attn/utils.py::triton_fill_block_map_kernel @97fac836b3
@triton.jit
def _select_top_kernel(block_map, n_select, order, NK: tl.constexpr):
    b, h, qb = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    H, Q = tl.num_programs(1), tl.num_programs(2)
    row = (b * H + h) * Q + qb
    n = tl.load(n_select + row)
    n = tl.where(n == 0, 1, n)
    for i in range(n):
        tl.store(block_map + row * NK + tl.load(order + row * NK + i), 1)


# portq: ports spargeattn:spas_sage_attn/utils.py::fill_block_map_triton @97fac836b3
def select_top_blocks(block_map, n_select, order):
    """Set the first n_select (at least one) tiles of each row's order."""
    block_map = block_map.contiguous()
    n_select = n_select.contiguous()
    order = order.contiguous()
    B, H, Q, K = block_map.shape
    _select_top_kernel[(B, H, Q)](block_map, n_select, order, K)
    return block_map


# portq: ports spargeattn:spas_sage_attn/utils.py::triton_fill_causal_mask @97fac836b3
@triton.jit
def _causal_tiles_kernel(mask, ratio):
    qb, kb = tl.program_id(0), tl.program_id(1)
    K = tl.num_programs(1)
    tl.store(mask + qb * K + kb, kb < (qb + 1) * ratio)


# portq: ports spargeattn:spas_sage_attn/utils.py::fill_causal_mask_triton @97fac836b3
def causal_tiles(mask, ratio: float):
    """Key tile kb is visible from query tile qb when kb < (qb + 1) * ratio."""
    assert mask.dim() == 2
    _causal_tiles_kernel[tuple(mask.shape)](mask, ratio)
    return mask


# portq: ports spargeattn:spas_sage_attn/utils.py::get_block_map_meansim_fuse_quant @97fac836b3
# portq: not-carried spargeattn:spas_sage_attn/utils.py::get_block_map_meansim -- the unfused prediction
def predict_block_map(q, k, km=None, is_causal=False, BLKQ=128, BLKK=64, simthreshd1=0.1, cdfthreshd=0.9, is_sparse=True, return_lut=False, attention_sink=False):
    """The (B, H, Q-tiles, K-tiles) block map (or its LUT and counts) with
    the int8 codes and scales of q and of k - km."""
    heads = q.size(1)
    sim_threshold = per_head(simthreshd1, heads, q.device)
    cdf_threshold = per_head(cdfthreshd, heads, q.device)
    nq = triton.cdiv(q.shape[-2], BLKQ)
    nk = triton.cdiv(k.shape[-2], BLKK)
    pooled_q, similar_q, q_codes, q_scale = pool_similarity_quant(q, None, BLKQ, sim_threshold)
    pooled_k, similar_k, k_codes, k_scale = pool_similarity_quant(k, km, BLKK, sim_threshold)
    similar_k = similar_k.unsqueeze(-2).expand(-1, -1, nq, -1)
    similar_q = similar_q.unsqueeze(-1).expand(-1, -1, -1, nk)
    score = pooled_q @ pooled_k.transpose(-1, -2) * q.shape[-1] ** -0.5
    score[~similar_k] = -torch.inf
    if is_causal:
        visible = causal_tiles(torch.empty(nq, nk, device=q.device, dtype=torch.bool), BLKQ / BLKK)
        score = score.masked_fill(~visible[None, None], -torch.inf)
    ranked = torch.sort(score.softmax(-1), dim=-1, descending=True)
    cdf = torch.cumsum(ranked.values, dim=-1)
    B, H, Q, _ = cdf.shape
    wanted = cdf_threshold.view(1, H, 1, 1).expand(B, -1, Q, 1).contiguous()
    n_select = torch.searchsorted(cdf, wanted, right=True).squeeze(-1)
    block_map = torch.zeros_like(score, dtype=torch.bool)
    block_map[~similar_k] = 1
    block_map[~similar_q] = 1
    block_map = select_top_blocks(block_map, n_select, ranked.indices)
    if is_causal:
        block_map = block_map * visible[None, None]
    if attention_sink:
        block_map[:, :, :, 0] = 1
    if not return_lut:
        return block_map, q_codes, q_scale, k_codes, k_scale
    lut, counts = block_map_to_lut(block_map)
    return lut, counts, q_codes, q_scale, k_codes, k_scale
