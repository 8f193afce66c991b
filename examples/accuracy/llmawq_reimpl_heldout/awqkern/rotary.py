"""The neox rotary embedding, from the CUDA source under csrc/ (built on
first use; CUDA only)."""

import functools
import os


@functools.lru_cache(maxsize=None)
def _extension():
    from torch.utils.cpp_extension import load

    here = os.path.join(os.path.dirname(__file__), "csrc")
    return load(name="awqkern_rotary", sources=[os.path.join(here, "rotary_neox.cu"), os.path.join(here, "bindings.cpp")])


def rotary_neox(positions, q, k, head_dim, cos_sin):
    """Rotates q and k (B, T, 1, H, D) in place at `positions` (B, T) int64."""
    _extension().rotary_neox(positions, q, k, head_dim, cos_sin)
