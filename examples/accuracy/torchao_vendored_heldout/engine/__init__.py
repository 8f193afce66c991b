"""A low-precision linear layer, calling the vendored torchao MX kernels."""
