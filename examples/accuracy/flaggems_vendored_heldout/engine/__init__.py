"""A toy decoder block's forward pass on FlagGems kernels vendored verbatim.

The vendored modules import upstream's ``flag_gems.utils`` (its launch cache
and pointwise code generator), which a deployment installs with FlagGems'
runtime; they run on CUDA only.
"""
