"""Rotary positional embeddings."""

import math

import torch


def _yarn_find_correction_dim(num_rotations: int, dim: int, base: float,
                              max_position_embeddings: int) -> float:
    return (dim * math.log(max_position_embeddings /
                           (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn_find_correction_range(low_rot: int, high_rot: int, dim: int,
                                base: float,
                                max_position_embeddings: int) -> tuple[int, int]:
    low = math.floor(_yarn_find_correction_dim(low_rot, dim, base,
                                               max_position_embeddings))
    high = math.ceil(_yarn_find_correction_dim(high_rot, dim, base,
                                               max_position_embeddings))
    return max(low, 0), min(high, dim - 1)


class RotaryEmbedding(torch.nn.Module):

    def __init__(self, head_size: int, rotary_dim: int,
                 max_position_embeddings: int, base: float, is_neox_style: bool):
        super().__init__()
        self.head_size = head_size
        self.rotary_dim = rotary_dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        self.is_neox_style = is_neox_style
        self.register_buffer("cos_sin_cache", self._compute_cos_sin_cache(),
                             persistent=False)

    def _compute_inv_freq(self, base: float) -> torch.Tensor:
        exponents = torch.arange(0, self.rotary_dim, 2, dtype=torch.float)
        return 1.0 / (base**(exponents / self.rotary_dim))

    def _compute_cos_sin_cache(self) -> torch.Tensor:
        inv_freq = self._compute_inv_freq(self.base)
        t = torch.arange(self.max_position_embeddings, dtype=torch.float)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        return torch.cat((freqs.cos(), freqs.sin()), dim=-1)
