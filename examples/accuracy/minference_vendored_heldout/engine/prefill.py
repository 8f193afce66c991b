"""Long-context prefill attention of a decoder layer on the vendored ops:
per layer, a pattern chosen offline by the engine's own calibration
("vertical_and_slash" with a vertical and a slash budget, or "block_sparse"
with a key-block budget); short prompts go dense. The vertical and slash
positions are estimated from the last query block's attention (the engine's
own estimate). Owns no kernels; the vendored modules are upstream's,
unmodified (the vertical-and-slash entry point needs the index builder built
as minference.cuda; the block-sparse module imports pycuda and flash_attn at
the top)."""

import torch

try:
    from minference.ops.pit_sparse_flash_attention_v2 import vertical_slash_sparse_attention
except ImportError:  # the CUDA index builder is not built on this machine
    vertical_slash_sparse_attention = None
try:
    from minference.ops.block_sparse_flash_attention import block_sparse_attention
except ImportError:  # pycuda or flash_attn is not installed
    block_sparse_attention = None

SPARSE_MIN_LEN = 128
LAST_Q = 64


def _estimate_vertical_slash(q, k, n_vertical, n_slash):
    """Top vertical key positions and slash offsets (i - j) of the last
    LAST_Q queries' causal attention; the first keys and the nearest
    diagonals are always kept."""
    length = q.shape[-2]
    last = min(LAST_Q, length)
    rows = torch.arange(length - last, length, device=q.device)
    cols = torch.arange(length, device=q.device)
    causal = cols[None, :] <= rows[:, None]
    scores = (q[..., -last:, :].float() @ k.float().transpose(-1, -2)) * q.shape[-1] ** -0.5
    probs = torch.softmax(scores.masked_fill(~causal, -torch.inf), dim=-1)
    vertical = probs.sum(dim=-2)
    vertical[..., :4] = torch.inf
    offsets = (rows[:, None] - cols[None, :]).clamp(min=0).reshape(-1)
    flat = probs.masked_fill(~causal, 0.0).flatten(-2)
    slash = torch.zeros_like(vertical).scatter_add_(-1, offsets.expand(*flat.shape[:-1], -1), flat)
    slash[..., :LAST_Q] = torch.inf
    v_idx = torch.topk(vertical, min(n_vertical, length), dim=-1).indices
    s_idx = torch.topk(slash, min(n_slash, length), dim=-1).indices
    return v_idx, s_idx


def prefill_attention(q, k, v, pattern):
    """Causal attention of (1, H, L, D) fp16 tensors under the layer's
    pattern: ("vertical_and_slash", n_vertical, n_slash) or
    ("block_sparse", top_k). Batch 1, as the vendored entry points take."""
    if q.shape[-2] < SPARSE_MIN_LEN:
        return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True).to(q.dtype)
    kind = pattern[0]
    if kind == "vertical_and_slash":
        assert vertical_slash_sparse_attention is not None, "the vertical-and-slash path needs the index builder built"
        v_idx, s_idx = _estimate_vertical_slash(q, k, pattern[1], pattern[2])
        return vertical_slash_sparse_attention(q, k, v, v_idx, s_idx)
    if kind == "block_sparse":
        assert block_sparse_attention is not None, "the block-sparse module needs pycuda and flash_attn importable"
        return block_sparse_attention(q, k, v, pattern[1])
    raise ValueError(f"unknown pattern {kind!r}")
