"""A Llama-style decoder layer of a 4-bit AWQ model: RMSNorm, quantised
QKV/output/MLP projections, neox rotary on the CUDA extension, attention
in torch. Owns no kernels."""

import torch
import torch.nn.functional as F
from torch import nn

from awqkern import AWQLinear, FusedRMSNorm
from awqkern.rotary import rotary_neox


def _cos_sin_cache(max_pos, rot_dim, base, device, dtype):
    inv = 1.0 / (base ** (torch.arange(0, rot_dim, 2, device=device, dtype=torch.float32) / rot_dim))
    ang = torch.arange(max_pos, device=device, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([ang.cos(), ang.sin()], dim=-1).to(dtype)


class DecoderLayer(nn.Module):
    """Built from quantised projections: qkv (E -> 3E), o (E -> E), gate/up
    (E -> F each), down (F -> E), and the two norm weights."""

    def __init__(self, qkv, o, gate, up, down, attn_norm, mlp_norm, heads, eps=1e-6, max_pos=2048, rope_base=10000.0):
        super().__init__()
        self.qkv, self.o, self.gate, self.up, self.down = qkv, o, gate, up, down
        self.attn_norm = FusedRMSNorm(attn_norm, eps)
        self.mlp_norm = FusedRMSNorm(mlp_norm, eps)
        self.heads = heads
        self.head_dim = qkv.in_features // heads
        self.max_pos, self.rope_base = max_pos, rope_base
        self._cache = None

    def mlp(self, x):
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))

    def attention(self, x, positions):
        batch, length, width = x.shape
        h = self.attn_norm(x)
        qkv = self.qkv(h).view(batch, length, 3, self.heads, self.head_dim)
        q = qkv[:, :, 0:1].contiguous()
        k = qkv[:, :, 1:2].contiguous()
        v = qkv[:, :, 2]
        if self._cache is None:
            self._cache = _cos_sin_cache(self.max_pos, self.head_dim, self.rope_base, x.device, x.dtype)
        rotary_neox(positions, q, k, self.head_dim, self._cache)
        o = F.scaled_dot_product_attention(q[:, :, 0].transpose(1, 2), k[:, :, 0].transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        return x + self.o(o.transpose(1, 2).reshape(batch, length, width))

    def forward(self, x, positions):
        return self.mlp(self.attention(x, positions))
