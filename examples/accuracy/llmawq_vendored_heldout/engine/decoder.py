"""A Llama-style decoder layer of a 4-bit AWQ model on the vendored modules:
upstream's WQLinear for the QKV/output/MLP projections, FTLlamaRMSNorm for
the norms, the neox rotary embedding of the extension, attention in torch.
Owns no kernels; the vendored modules are upstream's, unmodified. The
extension awq_inference_engine is built from the vendored CUDA sources and
the tree's binding on first use (CUDA only), before the modules import it."""

import functools
import importlib
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

CSRC = os.path.join(os.path.dirname(__file__), os.pardir, "awq", "kernels", "csrc")


@functools.lru_cache(maxsize=None)
def build_extension():
    """Builds awq_inference_engine unless something already provides it."""
    if "awq_inference_engine" in sys.modules:
        return sys.modules["awq_inference_engine"]
    from torch.utils.cpp_extension import load

    sources = ["bindings.cpp", "quantization/gemm_cuda_gen.cu", "layernorm/layernorm.cu",
               "position_embedding/pos_encoding_kernels.cu"]
    ext = load(name="awq_inference_engine", sources=[os.path.join(CSRC, s) for s in sources],
               extra_include_paths=[CSRC], extra_cuda_cflags=["-O3", "-U__CUDA_NO_HALF_OPERATORS__"])
    sys.modules["awq_inference_engine"] = ext
    return ext


def _modules():
    build_extension()
    qmodule = importlib.import_module("awq.quantize.qmodule")
    fused_norm = importlib.import_module("tinychat.modules.fused_norm")
    return qmodule.WQLinear, fused_norm.FTLlamaRMSNorm


def quantised(linear, scales, zeros, group_size=128):
    """Upstream's WQLinear from a float linear, its group scales and zero
    points ((in_features / group_size, out_features) each)."""
    wq_linear, _ = _modules()
    return wq_linear.from_linear(linear, 4, group_size, scales=scales, zeros=zeros)


def _cos_sin_cache(max_pos, rot_dim, base, device, dtype):
    inv = 1.0 / (base ** (torch.arange(0, rot_dim, 2, device=device, dtype=torch.float32) / rot_dim))
    ang = torch.arange(max_pos, device=device, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([ang.cos(), ang.sin()], dim=-1).to(dtype)


class DecoderLayer(nn.Module):
    """Built from quantised projections (WQLinear): qkv (E -> 3E), o, gate,
    up, down, and the two norm weights."""

    def __init__(self, qkv, o, gate, up, down, attn_norm, mlp_norm, heads, eps=1e-6, max_pos=2048, rope_base=10000.0):
        super().__init__()
        _, rms_norm = _modules()
        self.qkv, self.o, self.gate, self.up, self.down = qkv, o, gate, up, down
        self.attn_norm = rms_norm(attn_norm, eps)
        self.mlp_norm = rms_norm(mlp_norm, eps)
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
        build_extension().rotary_embedding_neox(positions, q, k, self.head_dim, self._cache)
        o = F.scaled_dot_product_attention(q[:, :, 0].transpose(1, 2), k[:, :, 0].transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        return x + self.o(o.transpose(1, 2).reshape(batch, length, width))

    def forward(self, x, positions):
        return self.mlp(self.attention(x, positions))
