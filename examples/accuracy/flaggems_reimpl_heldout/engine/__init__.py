"""A toy decoder block's forward pass on the gemsops kernels."""
