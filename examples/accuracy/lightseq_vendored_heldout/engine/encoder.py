"""The engine's post-LN Transformer encoder layer on LightSeq's vendored
LayerNorm and attention softmax (torch.ops.engine_lightseqv,
csrc/lightseq_ops.cpp). The additive key-padding mask is built in torch. It
builds no kernels and holds no weights beyond what the caller passes."""

import math

import torch

# The large negative value LightSeq's kernels use for padded keys.
MASKED = -1.0e8


def padding_mask(seq_lens: torch.Tensor, k_len: int, dtype: torch.dtype) -> torch.Tensor:
    """(batch, k_len) additive mask: 0 inside each sequence, MASKED past its end."""
    keys = torch.arange(k_len, device=seq_lens.device)
    past = keys.view(1, k_len) >= seq_lens.view(-1, 1)
    return torch.zeros(past.shape, device=seq_lens.device, dtype=torch.float32).masked_fill(past, MASKED).to(dtype)


def attention_probs(q: torch.Tensor, k: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
    """q, k (batch, heads, len, head_dim) fp32/fp16 -> softmax(q k^T / sqrt(head_dim) + mask), at most 512 keys."""
    scores = torch.matmul(q, k.transpose(-1, -2)).mul_(1.0 / math.sqrt(q.shape[-1])).contiguous()
    return torch.ops.engine_lightseqv.attn_softmax(scores, key_mask)


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last dimension, same dtype in and out."""
    y, _var, _mean = torch.ops.engine_lightseqv.layer_norm(x.contiguous(), gamma, beta)
    return y


def encoder_layer(x, seq_lens, params, heads: int):
    """One post-LN encoder layer: x (batch, len, hidden), params a dict of the layer's weights."""
    batch, length, hidden = x.shape
    head_dim = hidden // heads
    qkv = x @ params["qkv"].t()
    q, k, v = (t.view(batch, length, heads, head_dim).transpose(1, 2) for t in qkv.split(hidden, dim=-1))
    probs = attention_probs(q, k, padding_mask(seq_lens, length, x.dtype))
    ctx = (probs @ v).transpose(1, 2).reshape(batch, length, hidden)
    x = layer_norm(x + ctx @ params["out"].t(), params["ln1_g"], params["ln1_b"])
    mlp = torch.nn.functional.relu(x @ params["fc1"].t()) @ params["fc2"].t()
    return layer_norm(x + mlp, params["ln2_g"], params["ln2_b"])
