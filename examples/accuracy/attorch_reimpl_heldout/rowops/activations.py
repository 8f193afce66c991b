"""Element-wise activations, forward only: the scalar Triton functions, the
dispatcher a kernel calls with the activation's name, the flat kernel and its
host launch. Must not save anything for a backward."""

import torch
import triton
import triton.language as tl

from .tiles import elementwise_config

# Names the dispatcher understands; "relu2" (squared ReLU) is the engine's own.
ACTIVATIONS = ("sigmoid", "tanh", "relu", "gelu", "silu", "relu2")

# 1/sqrt(2), the erf argument scale of the exact GELU.
INV_SQRT2 = tl.constexpr(0.707106781)


# portq: ports attorch:attorch/act_kernels.py::sigmoid
@triton.jit
def sigmoid_f(x):
    return 1 / (1 + tl.exp(-x))


# portq: ports attorch:attorch/act_kernels.py::tanh
@triton.jit
def tanh_f(x):
    return 2 * sigmoid_f(2 * x) - 1


# portq: ports attorch:attorch/act_kernels.py::relu
@triton.jit
def relu_f(x):
    return tl.maximum(0, x)


# portq: ports attorch:attorch/act_kernels.py::gelu
@triton.jit
def gelu_f(x):
    return 0.5 * (1 + tl.math.erf(x * INV_SQRT2)) * x


# portq: ports attorch:attorch/act_kernels.py::silu
@triton.jit
def silu_f(x):
    return x * sigmoid_f(x)


@triton.jit
def relu_squared_f(x):
    """The engine's own: squared ReLU, for heads trained with it."""
    r = tl.maximum(0, x)
    return r * r


# portq: not-carried attorch:attorch/act_kernels.py::sigmoid_grad -- inference only, no gradient
# portq: not-carried attorch:attorch/act_kernels.py::tanh_grad -- inference only, no gradient
# portq: not-carried attorch:attorch/act_kernels.py::relu_grad -- inference only, no gradient
# portq: not-carried attorch:attorch/act_kernels.py::gelu_grad -- inference only, no gradient
# portq: not-carried attorch:attorch/act_kernels.py::silu_grad -- inference only, no gradient
# portq: not-carried attorch:attorch/act_kernels.py::apply_act_func_grad -- inference only, no gradient
# portq: ports attorch:attorch/act_kernels.py::apply_act_func
@triton.jit
def activate(x, name: tl.constexpr):
    if name == "sigmoid":
        y = sigmoid_f(x)
    elif name == "tanh":
        y = tanh_f(x)
    elif name == "relu":
        y = relu_f(x)
    elif name == "gelu":
        y = gelu_f(x)
    elif name == "silu":
        y = silu_f(x)
    elif name == "relu2":
        y = relu_squared_f(x)
    return y


# portq: not-carried attorch:attorch/act_kernels.py::act_func_backward_kernel -- inference only, no gradient
# portq: ports attorch:attorch/act_kernels.py::act_func_forward_kernel
@triton.jit
def activation_kernel(src, dst, n, name: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(src + offs, mask=ok)
    tl.store(dst + offs, activate(x, name), mask=ok)


# portq: not-carried attorch:attorch/act_layers.py::ActFuncAutoGrad.backward -- inference only, no gradient
class ActivationOp:
    """Host side of the forward: flattens, launches over blocks, restores the shape."""

    # portq: ports attorch:attorch/act_layers.py::ActFuncAutoGrad.forward
    @staticmethod
    def forward(x: torch.Tensor, name: str) -> torch.Tensor:
        if name not in ACTIVATIONS:
            raise ValueError(f"name: expected one of {', '.join(ACTIVATIONS)}, got {name!r}")
        flat = x.flatten()
        n = flat.numel()
        out = torch.empty_like(flat)
        config = elementwise_config(n)
        block = config.kwargs["BLOCK"]
        activation_kernel[(triton.cdiv(n, block),)](flat, out, n, name, BLOCK=block, num_warps=config.num_warps)
        return out.view_as(x)


def activate_tensor(x: torch.Tensor, name: str) -> torch.Tensor:
    """The engine's entry point: `name` applied to every element of `x`."""
    return ActivationOp.forward(x, name)
