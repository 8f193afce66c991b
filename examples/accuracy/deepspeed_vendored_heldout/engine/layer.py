"""The engine's transformer layer pieces around DeepSpeed's vendored CUDA
inference kernels: the attention softmax over raw scores, the attention
output's bias, the MLP's fused bias-GeLU and the residual add that closes the
layer, through the engine_ds torch ops (csrc/ds_inference_ops.cu). It does not
load the extension; the build does."""

import torch


def attention_probs(scores, mask=None, alibi=None, scale=1.0, causal=True, window=0, head_offset=0, mp_size=1):
    """scores (batch, heads, queries, keys) -> softmax probabilities, in place."""
    scores = scores.contiguous()
    torch.ops.engine_ds.attn_softmax_(scores, mask, alibi, scale, causal, window > 0, window, head_offset, mp_size)
    return scores


def attention_output(projected, bias):
    """The attention projection's output plus its bias, in place."""
    torch.ops.engine_ds.bias_add_(projected, bias)
    return projected


def mlp_up(hidden, bias):
    """The MLP's first projection plus bias through tanh-GeLU, in place."""
    torch.ops.engine_ds.bias_gelu_(hidden, bias)
    return hidden


def close_layer(mlp_out, residual, attn, mlp_bias, attn_bias, mp_size=1):
    """Pre-LN residual: mlp_out + (residual + attn + both biases) / mp_size, in place in mlp_out."""
    torch.ops.engine_ds.residual_add_(mlp_out, residual, attn, mlp_bias, attn_bias, mp_size, True)
    return mlp_out


def close_parallel_layer(mlp_out, residual, attn, mlp_bias, attn_bias=None, mp_size=1):
    """GPT-J/GPT-NeoX residual: mlp_out + attn + mlp_bias + (residual + attn_bias) / mp_size, in place in mlp_out."""
    torch.ops.engine_ds.parallel_residual_add_(mlp_out, residual, attn, mlp_bias, attn_bias, mp_size)
    return mlp_out
