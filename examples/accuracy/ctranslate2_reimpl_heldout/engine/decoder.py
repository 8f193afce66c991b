"""One step of the engine's pre-LN Transformer decoder over its own CUDA
LayerNorm and softmax (torch.ops.engine_ct2, csrc/bindings.cpp): attention over
the cached keys with per-row key lengths, the final norm and the output
distribution with a sampling temperature. It builds no kernels and holds no
weights beyond what the caller passes."""

import math

import torch


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last dimension, same dtype in and out."""
    return torch.ops.engine_ct2.layer_norm(x.contiguous(), gamma, beta)


def softmax(x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last dimension; with lengths (int32, one per row), zeros past each row's length."""
    return torch.ops.engine_ct2.softmax(x.contiguous(), lengths)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_lens: torch.Tensor) -> torch.Tensor:
    """q (batch, heads, 1, d), k/v (batch, heads, max_len, d), k_lens (batch,): attention over each row's cached keys."""
    batch, heads, q_len, _ = q.shape
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    lens = k_lens.to(torch.int32).view(batch, 1, 1).expand(batch, heads, q_len).contiguous()
    return torch.matmul(softmax(scores, lens), v)


def next_token_probs(hidden: torch.Tensor, params: dict, temperature: float = 1.0) -> torch.Tensor:
    """hidden (batch, model) -> (batch, vocab) probabilities after the final norm and the output projection."""
    logits = layer_norm(hidden, params["ln_g"], params["ln_b"]) @ params["embed"].t()
    if temperature != 1.0:
        logits = torch.ops.engine_ct2.scale_logits(logits.contiguous(), temperature)
    return softmax(logits)


def decoder_step(x: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, k_lens: torch.Tensor,
                 params: dict, heads: int) -> torch.Tensor:
    """One pre-LN self-attention block for one new token per row: x (batch, model), caches (batch, heads, max_len, d)."""
    batch, model = x.shape
    d = model // heads
    h = layer_norm(x, params["ln1_g"], params["ln1_b"])
    q = (h @ params["q"].t()).view(batch, heads, 1, d)
    ctx = attention(q, k_cache, v_cache, k_lens).reshape(batch, model)
    return x + ctx @ params["out"].t()
