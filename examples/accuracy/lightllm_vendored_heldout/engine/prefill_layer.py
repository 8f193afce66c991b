"""One attention layer's prefill over packed prompts on the vendored LightLLM
kernels: norm, projections, rotary, cache write and causal attention. Owns
no kernels; the vendored modules are upstream's, unmodified."""

import torch

import lightllm.models.llama.triton_kernel.rotary_emb as rotary
from lightllm.common.basemodel.triton_kernel.destindex_copy_kv import destindex_copy_kv as write_cache
from lightllm.models.llama.triton_kernel import context_flashattention_nopad as prefill
from lightllm.models.llama.triton_kernel.rmsnorm import rmsnorm_forward


class PrefillLayer:
    """Projections of one layer, with head counts and the norm's weight."""

    def __init__(self, wq, wk, wv, wo, norm_weight, n_heads: int, n_kv_heads: int, eps: float = 1e-6):
        self.wq, self.wk, self.wv, self.wo = wq, wk, wv, wo
        self.norm_weight = norm_weight
        self.n_heads, self.n_kv_heads, self.eps = n_heads, n_kv_heads, eps

    def __call__(self, hidden, cos, sin, slots, key_cache, value_cache, starts, lengths):
        tokens = hidden.shape[0]
        x = rmsnorm_forward(hidden, self.norm_weight, self.eps)
        head_dim = self.wq.shape[1] // self.n_heads
        q = (x @ self.wq).view(tokens, self.n_heads, head_dim)
        k = (x @ self.wk).view(tokens, self.n_kv_heads, head_dim)
        v = (x @ self.wv).view(tokens, self.n_kv_heads, head_dim)
        rotary.rotary_emb_fwd(q, cos, sin)
        rotary.rotary_emb_fwd(k, cos, sin)
        write_cache(k, slots, key_cache)
        write_cache(v, slots, value_cache)
        out = torch.empty_like(q)
        prefill.context_attention_fwd(q, k, v, out, starts, lengths, int(lengths.max()))
        return hidden + out.view(tokens, -1) @ self.wo
