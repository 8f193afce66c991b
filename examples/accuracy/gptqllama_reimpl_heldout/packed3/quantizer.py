"""Asymmetric or symmetric min/max grid quantiser, per channel or per
tensor, with an optional shrinking search that minimises the p-norm of the
rounding error. The grid is scale * (q - zero), q in [0, maxq]."""

import torch
from torch import nn


# portq: ports gptqllama:quant.py::quantize @1eb985a
def round_to_grid(x, scale, zero, maxq):
    q = torch.clamp(torch.round(x / scale) + zero, 0, maxq)
    return scale * (q - zero)


# portq: ports gptqllama:quant.py::Quantizer @1eb985a
class MinMaxQuantizer(nn.Module):
    def __init__(self, shape=1):
        super().__init__()
        self.register_buffer("maxq", torch.tensor(0))
        self.register_buffer("scale", torch.zeros(shape))
        self.register_buffer("zero", torch.zeros(shape))

    # portq: ports gptqllama:quant.py::Quantizer.configure @1eb985a
    def configure(self, bits, perchannel=False, sym=True, mse=False, norm=2.4, grid=100, maxshrink=0.8):
        self.maxq = torch.tensor(2**bits - 1)
        self.perchannel, self.sym, self.mse = perchannel, sym, mse
        self.norm, self.grid, self.maxshrink = norm, grid, maxshrink

    @staticmethod
    def _rows(x, weight, perchannel):
        if not perchannel:
            return x.flatten().unsqueeze(0)
        if weight:
            return x.flatten(1)
        if x.dim() == 4:
            return x.permute(1, 0, 2, 3).flatten(1)
        if x.dim() == 3:
            return x.reshape(-1, x.shape[-1]).t()
        if x.dim() == 2:
            return x.t()
        return x

    # portq: ports gptqllama:quant.py::Quantizer.find_params @1eb985a
    def find_params(self, x, weight=False):
        dev = x.device
        self.maxq = self.maxq.to(dev)
        shape = x.shape
        rows = self._rows(x, weight, self.perchannel)

        nil = torch.zeros(rows.shape[0], device=dev)
        lo = torch.minimum(rows.min(1)[0], nil)
        hi = torch.maximum(rows.max(1)[0], nil)
        if self.sym:
            hi = torch.maximum(lo.abs(), hi)
            neg = lo < 0
            if torch.any(neg):
                lo[neg] = -hi[neg]
        empty = (lo == 0) & (hi == 0)
        lo[empty] = -1
        hi[empty] = +1

        self.scale = (hi - lo) / self.maxq
        if self.sym:
            self.zero = torch.full_like(self.scale, (self.maxq + 1) / 2)
        else:
            self.zero = torch.round(-lo / self.scale)

        if self.mse:
            best = torch.full([rows.shape[0]], float("inf"), device=dev)
            for i in range(int(self.maxshrink * self.grid)):
                p = 1 - i / self.grid
                lo1, hi1 = p * lo, p * hi
                scale1 = (hi1 - lo1) / self.maxq
                zero1 = self.zero if self.sym else torch.round(-lo1 / scale1)
                err = round_to_grid(rows, scale1.unsqueeze(1), zero1.unsqueeze(1), self.maxq)
                err -= rows
                err.abs_()
                err.pow_(self.norm)
                err = torch.sum(err, 1)
                better = err < best
                if torch.any(better):
                    best[better] = err[better]
                    self.scale[better] = scale1[better]
                    self.zero[better] = zero1[better]

        if not self.perchannel:
            if weight:
                reps = shape[0]
            else:
                reps = shape[1] if len(shape) != 3 else shape[2]
            self.scale = self.scale.repeat(reps)
            self.zero = self.zero.repeat(reps)

        if weight:
            view = [-1] + [1] * (len(shape) - 1)
            self.scale = self.scale.reshape(view)
            self.zero = self.zero.reshape(view)
            return
        if len(shape) == 4:
            self.scale = self.scale.reshape((1, -1, 1, 1))
            self.zero = self.zero.reshape((1, -1, 1, 1))
        if len(shape) == 3:
            self.scale = self.scale.reshape((1, 1, -1))
            self.zero = self.zero.reshape((1, 1, -1))
        if len(shape) == 2:
            self.scale = self.scale.unsqueeze(0)
            self.zero = self.zero.unsqueeze(0)

    # portq: ports gptqllama:quant.py::Quantizer.quantize @1eb985a
    def quantize(self, x):
        if self.ready():
            return round_to_grid(x, self.scale, self.zero, self.maxq)
        return x

    # portq: ports gptqllama:quant.py::Quantizer.enabled @1eb985a
    def enabled(self):
        return self.maxq > 0

    # portq: ports gptqllama:quant.py::Quantizer.ready @1eb985a
    def ready(self):
        return torch.all(self.scale != 0)
