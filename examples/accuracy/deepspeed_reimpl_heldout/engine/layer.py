"""The engine's transformer-layer steps around its CUDA kernels (csrc/):
attention probabilities from raw scores, the attention projection's bias,
the MLP's bias-GeLU (in place, or into a separate buffer when an adapter
needs the pre-activation) and the pre-LN residual that closes the layer,
through the engine_layer torch ops (csrc/bindings.cpp). It does not load the
extension; the build does."""

import torch


def attention_probs(scores, mask=None, scale=1.0, causal=True):
    """scores (batch, heads, queries, keys) -> softmax(scores * scale + mask), in place."""
    torch.ops.engine_layer.masked_softmax(scores, mask, scale, causal)
    return scores


def attention_output(projected, bias):
    torch.ops.engine_layer.bias_add(projected, bias)
    return projected


def mlp_up(hidden, bias, keep_pre_activation=False):
    """GeLU(hidden + bias); in place unless the pre-activation must be kept."""
    if keep_pre_activation:
        out = torch.empty_like(hidden)
        torch.ops.engine_layer.bias_gelu_out(out, hidden, bias)
        return out
    torch.ops.engine_layer.bias_gelu(hidden, bias)
    return hidden


def close_layer(mlp_out, residual, attn, mlp_bias, attn_bias, mp_size=1):
    """mlp_out + (residual + attn + mlp_bias + attn_bias) / mp_size, in place in mlp_out."""
    torch.ops.engine_layer.residual_add(mlp_out, residual, attn, mlp_bias, attn_bias, mp_size)
    return mlp_out
