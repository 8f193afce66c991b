"""The sparse attention entry point: predict the block map and quantise Q
and K in one pass, then attend over the selected tiles only. The attention
itself is a PyTorch path over the int8 codes (dequantised per tile), in
place of upstream's CUDA extension, which this package does not build."""

import torch

from .blockmap import per_head, predict_block_map

BLKQ = 128
BLKK = 64


def _tiles_from_lut(lut, counts):
    """The boolean (B, H, Q-tiles, K-tiles) map a LUT and its counts encode."""
    n_k = lut.shape[-1]
    index = torch.cumsum(lut.long(), dim=-1)
    taken = torch.arange(n_k, device=lut.device) < counts[..., None].long()
    tiles = torch.zeros((*lut.shape[:-1], n_k + 1), dtype=torch.bool, device=lut.device)
    tiles.scatter_(-1, torch.where(taken, index, n_k), True)
    return tiles[..., :n_k]


def _per_row(scales, tile, length):
    return scales.repeat_interleave(tile, dim=-1)[..., :length, None]


def block_sparse_attention(q_codes, k_codes, v, out, lut, counts, q_scale, k_scale, is_causal, scale):
    """softmax(q k^T * scale) v over the tiles the LUT selects, with q and k
    given as int8 codes and per-tile scales; written into out."""
    n_q, n_k = q_codes.shape[-2], k_codes.shape[-2]
    tiles = _tiles_from_lut(lut, counts)
    keep = tiles.repeat_interleave(BLKQ, dim=-2)[..., :n_q, :].repeat_interleave(BLKK, dim=-1)[..., :n_k]
    if is_causal:
        keep = keep & torch.ones(n_q, n_k, dtype=torch.bool, device=q_codes.device).tril()
    qf = q_codes.float() * _per_row(q_scale.view(q_scale.shape[:3]), BLKQ, n_q)
    kf = k_codes.float() * _per_row(k_scale.view(k_scale.shape[:3]), BLKK, n_k)
    scores = (qf @ kf.transpose(-1, -2)) * scale
    probs = torch.softmax(scores.masked_fill(~keep, -torch.inf), dim=-1).nan_to_num(0.0)
    out.copy_((probs @ v.float()).to(out.dtype))
    return out


# portq: ports spargeattn:spas_sage_attn/core.py::spas_sage_attn_meansim_cuda @97fac836b3
# portq: not-carried spargeattn:spas_sage_attn/core.py::spas_sage_attn_meansim_cuda[pvthreshd] -- the PV-skip threshold lives in the CUDA kernel; the PyTorch path multiplies every selected tile
# portq: not-carried spargeattn:spas_sage_attn/core.py::spas_sage2_attn_meansim_cuda -- the fp8-V variant needs the CUDA extension
def sparse_sage_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, smooth_k=True, simthreshd1=0.1, cdfthreshd=0.9, pvthreshd=20, attention_sink=False, tensor_layout="HND", output_dtype=torch.float16, return_sparsity=False):
    """Sparse attention of (B, H, L, D) tensors (HND only; tensor_layout is
    accepted for signature compatibility), L >= 128, D in (64, 128). Returns
    the output, and the fraction of tiles skipped when return_sparsity."""
    assert q.size(-2) >= 128, "the sequence must be at least 128 long"
    if q.dtype in (torch.float32, torch.float16):
        q, k, v = (t.contiguous().to(torch.float16) for t in (q, k, v))
    else:
        q, k = q.contiguous().to(torch.bfloat16), k.contiguous().to(torch.bfloat16)
        v = v.contiguous().to(torch.float16)
    km = k.mean(dim=-2, keepdim=True) if smooth_k else None
    headdim = q.size(-1)
    lut, counts, q_codes, q_scale, k_codes, k_scale = predict_block_map(
        q, k, km, is_causal=is_causal, simthreshd1=simthreshd1, cdfthreshd=cdfthreshd,
        return_lut=True, attention_sink=attention_sink)
    if scale is None:
        scale = 1.0 / (headdim ** 0.5)
    assert headdim in (64, 128), "head dimension 64 or 128"
    per_head(pvthreshd, q.size(-3), q.device)
    o = torch.empty_like(q)
    block_sparse_attention(q_codes, k_codes, v, o, lut, counts, q_scale, k_scale, is_causal, scale)
    if not return_sparsity:
        return o
    B, H, Q, K = lut.shape
    total = K * Q * B * H if not is_causal else (K + 2) // 2 * Q * B * H
    return o, (1 - counts.float().sum() / total).item()
