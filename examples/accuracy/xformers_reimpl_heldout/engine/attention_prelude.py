"""What a decoder layer does before attention on a ragged decode batch: the
residual add fused with the input norm, the q/k/v projections, and RoPE
written straight into the padded KV cache. Calls kvprep; owns no kernels."""

import torch

import kvprep.rope as kvrope
from kvprep.norm import RMSNorm
from kvprep.norm import rms_norm_residual as add_and_norm


class AttentionPrelude:
    """Norm, project and rotate one layer's new tokens into its KV cache."""

    def __init__(self, hidden, q_heads, kv_heads, head_dim, theta=10000.0, eps=1e-6):
        self.q_heads, self.kv_heads, self.head_dim = q_heads, kv_heads, head_dim
        self.theta = theta
        self.norm = RMSNorm(hidden, eps=eps)
        self.wq = torch.randn(q_heads * head_dim, hidden) / hidden ** 0.5
        self.wk = torch.randn(kv_heads * head_dim, hidden) / hidden ** 0.5
        self.wv = torch.randn(kv_heads * head_dim, hidden) / hidden ** 0.5

    def to(self, device):
        self.norm.to(device)
        self.wq, self.wk, self.wv = self.wq.to(device), self.wk.to(device), self.wv.to(device)
        return self

    def _project(self, h):
        tokens = h.shape[0]
        q = (h @ self.wq.t()).view(1, tokens, self.q_heads, self.head_dim)
        k = (h @ self.wk.t()).view(1, tokens, self.kv_heads, self.head_dim)
        v = (h @ self.wv.t()).view(1, tokens, self.kv_heads, self.head_dim)
        return q, k, v

    def first_layer(self, x, k_cache, v_cache, layout):
        """The first layer has no residual to add yet."""
        q, k, v = self._project(self.norm(x))
        return kvrope.rope_into_cache(q, k, v, k_cache, v_cache, layout, theta=self.theta)

    def __call__(self, resid, delta, k_cache, v_cache, layout):
        """resid += delta (the previous layer's output), then norm, project and rotate."""
        h = add_and_norm(resid, delta, self.norm.weight, self.norm.eps)
        q, k, v = self._project(h)
        return kvrope.rope_into_cache(q, k, v, k_cache, v_cache, layout, theta=self.theta)
