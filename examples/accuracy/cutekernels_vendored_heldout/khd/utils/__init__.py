"""The tree's own stand-in for the host helpers the vendored modules import
(upstream's utils package, with its autotuner, is not vendored): an autotune
placeholder the engine never leaves in place, a decorator that applies no
tuning, and the stride check of the SwiGLU host."""

import torch


class CutoTuneParameter:
    """Marks an argument the autotuner would choose; the engine always passes a value."""


def cutotune(**_unused):
    def wrap(function):
        return function

    return wrap


def get_cartesian_product_cutotune_configs(**_unused):
    return []


def ensure_same_strides(*tensors: torch.Tensor):
    strides = {t.stride() for t in tensors if isinstance(t, torch.Tensor)}
    if len(strides) <= 1:
        return tensors
    return [t.contiguous() if isinstance(t, torch.Tensor) else t for t in tensors]
