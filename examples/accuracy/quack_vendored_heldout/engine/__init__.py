"""A decoder block's norms and their training step, on the vendored QuACK kernels."""

from .block_norms import DecoderNorms, norm_train_step

__all__ = ["DecoderNorms", "norm_train_step"]
