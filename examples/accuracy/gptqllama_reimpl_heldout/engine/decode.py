"""A two-layer MLP decoded one token at a time over 3-bit weights: each
linear's weight is put on a per-channel min/max grid by the quantiser,
the named linears are swapped for packed layers, which pack the grid
weights and run the Triton matvec."""

import torch
from torch import nn

from packed3 import MinMaxQuantizer, swap_linears


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
        q = MinMaxQuantizer()
        q.configure(bits, perchannel=True, sym=sym)
        q.find_params(linear.weight.data, weight=True)
        if q.enabled() and q.ready():
            linear.weight.data = q.quantize(linear.weight.data)
        grids[name] = (linear, q.scale, q.zero)
    swap_linears(model, set(names))
    for name, (linear, scale, zero) in grids.items():
        getattr(model, name).pack(linear, scale, zero)
    return model
