"""Long-context attention of the engine: rotary-embedded queries and keys
score the keys inside the trained window, unrotated ones the keys past it.
Projections and rotation are the caller's; this module owns no kernels."""

import math

from twoscore.api import two_score_attention

# keys at least this far behind a query are scored with the unrotated pair
TRAINED_WINDOW = 16


def prefill(q_rot, k_rot, q_plain, k_plain, v):
    """Causal prefill of (B, H, L, D) fp16 tensors."""
    scale = 1.0 / math.sqrt(q_rot.shape[-1])
    return two_score_attention(q_rot, k_rot, q_plain, k_plain, v, TRAINED_WINDOW, True, scale)


def decode_window(q_rot, k_rot, q_plain, k_plain, v):
    """The last queries against the whole cache, every key visible."""
    scale = 1.0 / math.sqrt(q_rot.shape[-1])
    return two_score_attention(q_rot, k_rot, q_plain, k_plain, v, TRAINED_WINDOW, False, scale)
