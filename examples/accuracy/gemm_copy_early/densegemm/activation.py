"""Epilogue activations the GEMM can fuse, looked up by name."""

import triton
import triton.language as tl


@triton.jit
def _silu(x):
    return x / (1.0 + tl.exp(-x))


@triton.jit
def _relu(x):
    return tl.maximum(x, 0.0)


_BY_NAME = {"silu": _silu, "relu": _relu}


def activation_from_name(name: str):
    if name not in _BY_NAME:
        raise ValueError(f"activation is {name!r}: expected one of {sorted(_BY_NAME)}")
    return _BY_NAME[name]
