"""A two-layer MLP decoded one token at a time over 3-bit weights, on the
vendored quant.py (upstream's, unmodified): Quantizer puts each linear's
weight on a per-channel min/max grid, make_quant3 swaps the named linears
for Quant3Linear, whose pack writes the 3-bit layout and whose forward
calls the CUDA extension's vecquant3matmul. Owns no kernels."""

import torch
from torch import nn

from gptq_llama.quant import Quantizer, make_quant3


class DecodeMLP(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def quantize_model(model, names=("up", "down"), bits=3, sym=False):
    """Quantise the named linears' weights in place and swap them for packed layers."""
    grids = {}
    for name in names:
        linear = getattr(model, name)
        q = Quantizer()
        q.configure(bits, perchannel=True, sym=sym)
        q.find_params(linear.weight.data, weight=True)
        if q.enabled() and q.ready():
            linear.weight.data = q.quantize(linear.weight.data)
        grids[name] = (linear, q.scale, q.zero)
    make_quant3(model, set(names))
    for name, (linear, scale, zero) in grids.items():
        getattr(model, name).pack(linear, scale, zero)
    return model
