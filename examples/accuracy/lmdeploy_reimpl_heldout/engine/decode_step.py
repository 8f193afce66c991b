"""One layer's step over a packed batch on the paged cache: norm, projections,
rotary, cache fill, and the next token drawn from the head's logits. Calls
pagedops; owns no kernels and allocates no cache blocks."""

import torch

import pagedops.rotary as rope
from pagedops import sampling
from pagedops.kv_cache import fill_paged_kv
from pagedops.norm import rms_norm as input_norm


class DecodeStep:
    """Projections of one layer and the LM head, with head counts and the norm's weight."""

    def __init__(self, wq, wk, wv, lm_head, norm_weight, n_heads: int, n_kv_heads: int,
                 eps: float = 1e-6):
        self.wq, self.wk, self.wv, self.lm_head = wq, wk, wv, lm_head
        self.norm_weight = norm_weight
        self.n_heads, self.n_kv_heads, self.eps = n_heads, n_kv_heads, eps

    def __call__(self, hidden, cos, sin, positions, key_cache, value_cache, start_loc,
                 seq_length, block_table, history, seeds, offsets, temperature: float = 1.0):
        tokens = hidden.shape[0]
        x = input_norm(hidden, self.norm_weight, self.eps)
        head_dim = self.wq.shape[1] // self.n_heads
        q = (x @ self.wq).view(tokens, self.n_heads, head_dim)
        k = (x @ self.wk).view(tokens, self.n_kv_heads, head_dim)
        v = (x @ self.wv).view(tokens, self.n_kv_heads, head_dim)
        q, k = rope.rotate_qk(q, k, cos, sin, positions)
        fill_paged_kv(k, v, key_cache, value_cache, start_loc, seq_length, block_table, history)
        last = start_loc + seq_length - 1
        logits = x[last] @ self.lm_head
        return q, sampling.sample_from_logits(logits, temperature, seeds, offsets)
