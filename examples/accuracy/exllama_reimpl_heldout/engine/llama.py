"""A Llama decoder layer of a 4-bit GPTQ model: RMSNorm, quantised
projections (act-order weights sequentialised once at load), the rotary
embedding in place on q and k, attention in torch, the MLP chained from
three quantised matmuls. Owns no kernels."""

import torch
import torch.nn.functional as F

from q4kern import dequantize_q4, llama_rms_norm, matmul_q4, rope_, sequentialize_q4


class QuantLinear:
    """qweight (in/8, out) int32, scales (groups, out) half, qzeros
    (groups, out/8) int32, g_idx (in,) int32 or None."""

    def __init__(self, qweight, scales, qzeros, g_idx=None, recons_rows=64, dequant=False):
        self.qweight, self.scales, self.zeros = qweight.clone(), scales, qzeros
        self.weight = None
        self.seq_g_idx = self.x_map = None
        self.recons_rows = recons_rows
        if g_idx is not None:
            groups = scales.shape[0]
            trivial = torch.equal(g_idx.long(), torch.arange(g_idx.shape[0], device=g_idx.device) // (g_idx.shape[0] // groups))
            if not trivial:
                self.seq_g_idx, self.x_map = sequentialize_q4(self.qweight, g_idx, groups)
        if dequant:
            # a dequantised model keeps half weights in the original row order
            self.weight = dequantize_q4(self.quant_args())

    def quant_args(self):
        return {"qweight": self.qweight, "scales": self.scales, "zeros": self.zeros,
                "seq_g_idx": self.seq_g_idx, "x_map": self.x_map}

    def __call__(self, x):
        if self.weight is not None:
            return torch.matmul(x, self.weight)
        rows = x.numel() // x.shape[-1]
        return matmul_q4(x, self.quant_args(), rows > self.recons_rows)


def sincos(max_pos, head_dim, base, device):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    freqs = torch.outer(torch.arange(max_pos, device=device).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.sin()[None, None].half(), emb.cos()[None, None].half()


class DecoderLayer:
    def __init__(self, q, k, v, o, gate, up, down, attn_norm, mlp_norm, num_heads, eps=1e-6, max_pos=256, base=10000.0):
        self.q, self.k, self.v, self.o = q, k, v, o
        self.gate, self.up, self.down = gate, up, down
        self.attn_norm, self.mlp_norm, self.eps = attn_norm, mlp_norm, eps
        self.num_heads = num_heads
        self.head_dim = attn_norm.shape[0] // num_heads
        self.sin, self.cos = sincos(max_pos, self.head_dim, base, attn_norm.device)

    def attention(self, x, past_len=0):
        bsz, q_len, width = x.shape
        h = llama_rms_norm(x, self.attn_norm, self.eps)
        q = self.q(h).view(bsz, q_len, self.num_heads, self.head_dim)
        k = self.k(h).view(bsz, q_len, self.num_heads, self.head_dim)
        v = self.v(h).view(bsz, q_len, self.num_heads, self.head_dim)
        rope_(q, self.sin, self.cos, past_len, self.num_heads, self.head_dim)
        rope_(k, self.sin, self.cos, past_len, self.num_heads, self.head_dim)
        a = F.scaled_dot_product_attention(q.transpose(1, 2).float(), k.transpose(1, 2).float(),
                                           v.transpose(1, 2).float(), is_causal=True)
        return x + self.o(a.transpose(1, 2).reshape(bsz, q_len, width).half())

    def mlp(self, x):
        h = llama_rms_norm(x, self.mlp_norm, self.eps)
        return x + self.down((F.silu(self.gate(h).float()) * self.up(h).float()).half())

    def forward(self, x, past_len=0):
        return self.mlp(self.attention(x, past_len))
