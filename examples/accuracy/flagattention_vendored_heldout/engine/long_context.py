"""Long-context attention of the engine on the vendored piecewise attention:
rotated queries and keys score the keys inside the trained window, plain
ones the keys past it. Owns no kernels; the vendored module is upstream's,
unmodified."""

import math

from flag_attn.piecewise import attention as piecewise_attention

# keys at least this far behind a query are scored with the plain pair
TRAINED_WINDOW = 64


def prefill(q_rot, k_rot, q_plain, k_plain, v):
    """Causal attention of fp16 (B, H, L, D) tensors, D in {16, 32, 64, 128}."""
    scale = 1.0 / math.sqrt(q_rot.shape[-1])
    return piecewise_attention(q_rot, k_rot, q_plain, k_plain, v, TRAINED_WINDOW, True, scale)


def train_step(q_rot, k_rot, q_plain, k_plain, v):
    """Non-causal attention with gradients to all five inputs."""
    scale = 1.0 / math.sqrt(q_rot.shape[-1])
    out = piecewise_attention(q_rot, k_rot, q_plain, k_plain, v, TRAINED_WINDOW, False, scale)
    out.float().sum().backward()
    return out
