"""One attention layer's prefill over packed prompts: norm, projections,
rotary, cache write and causal attention. Calls kvops; owns no kernels."""

import torch

import kvops.rotary as rope
from kvops import kv_cache
from kvops.norm import rms_norm as input_norm
from kvops.prefill import prefill_attention


class PrefillLayer:
    """Projections of one layer, with head counts and the norm's weight."""

    def __init__(self, wq, wk, wv, wo, norm_weight, n_heads: int, n_kv_heads: int, eps: float = 1e-6):
        self.wq, self.wk, self.wv, self.wo = wq, wk, wv, wo
        self.norm_weight = norm_weight
        self.n_heads, self.n_kv_heads, self.eps = n_heads, n_kv_heads, eps

    def __call__(self, hidden, cos, sin, slots, key_cache, value_cache, starts, lengths):
        tokens = hidden.shape[0]
        x = input_norm(hidden, self.norm_weight, self.eps)
        head_dim = self.wq.shape[1] // self.n_heads
        q = (x @ self.wq).view(tokens, self.n_heads, head_dim)
        k = (x @ self.wk).view(tokens, self.n_kv_heads, head_dim)
        v = (x @ self.wv).view(tokens, self.n_kv_heads, head_dim)
        rope.apply_rotary_inplace(q, cos, sin)
        rope.apply_rotary_inplace(k, cos, sin)
        kv_cache.scatter_kv_pair(k, v, slots, key_cache, value_cache)
        out = torch.empty_like(q)
        prefill_attention(q, k, v, out, starts, lengths, int(lengths.max()))
        return hidden + out.view(tokens, -1) @ self.wo
