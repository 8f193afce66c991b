"""The engine's BERT-style encoder layer on its fused CUDA ops
(torch.ops.engine_apex, csrc/bindings.cpp): the key-padding mask of a padded
batch, the scaled masked softmax of self-attention and the post-attention and
post-MLP LayerNorms. It builds no kernels and holds no weights of its own
beyond what the caller passes."""

import math

import torch


def padding_mask(seq_lens: torch.Tensor, q_len: int, k_len: int) -> torch.Tensor:
    """(batch, 1, q_len, k_len) uint8 mask, 1 where the key lies past the sequence's length."""
    return torch.ops.engine_apex.key_padding_mask(seq_lens.to(torch.int32), q_len, k_len)


def attention_probs(q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """q, k (batch, heads, len, head_dim) fp16/bf16 -> softmax(q k^T / sqrt(head_dim)) with masked keys dropped."""
    scores = torch.matmul(q, k.transpose(-1, -2))
    return torch.ops.engine_apex.masked_softmax(scores, mask, 1.0 / math.sqrt(q.shape[-1]))


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last dimension, same dtype in and out."""
    y, _mean, _rstd = torch.ops.engine_apex.affine_layer_norm(x, weight, bias, eps)
    return y


def encoder_layer(x, seq_lens, params, heads: int, eps: float = 1e-5):
    """One post-LN encoder layer: x (batch, len, hidden), params a dict of the layer's weights."""
    batch, length, hidden = x.shape
    head_dim = hidden // heads
    qkv = x @ params["qkv"].t()
    q, k, v = (t.view(batch, length, heads, head_dim).transpose(1, 2) for t in qkv.split(hidden, dim=-1))
    probs = attention_probs(q, k, padding_mask(seq_lens, length, length))
    ctx = (probs @ v).transpose(1, 2).reshape(batch, length, hidden)
    x = layer_norm(x + ctx @ params["out"].t(), params["ln1_w"], params["ln1_b"], eps)
    mlp = torch.nn.functional.gelu(x @ params["fc1"].t()) @ params["fc2"].t()
    return layer_norm(x + mlp, params["ln2_w"], params["ln2_b"], eps)
