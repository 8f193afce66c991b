"""The 3-bit linear layer: packs a float linear's weight, already on a
scale * (q - zero) grid, into the bitstream layout and runs single-token
forwards through the Triton matvec; and the helper that swaps named
linears of a module for such layers."""

import torch
from torch import nn

from .matvec import SLAB, SLAB_WORDS, matvec3


def pack_codes3(codes):
    """(in, out) integer codes in [0, 7] -> (in / 1024 * 96, out) int32:
    code k of a column at bit 3k of the column's words, read as one
    little-endian stream (three words carry 32 codes)."""
    n_in, n_out = codes.shape
    c = codes.to(torch.int64)
    words = torch.zeros((n_in // SLAB * SLAB_WORDS, n_out), dtype=torch.int64)
    for k in range(n_in):
        bit = 3 * k
        w, s = bit // 32, bit % 32
        words[w] |= (c[k] << s) & 0xFFFFFFFF
        if s > 29:
            words[w + 1] |= c[k] >> (32 - s)
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def unpack_codes3(words, n_in):
    w = words.to(torch.int64) & 0xFFFFFFFF
    out = torch.empty((n_in, words.shape[1]), dtype=torch.int64)
    for k in range(n_in):
        bit = 3 * k
        i, s = bit // 32, bit % 32
        stream = w[i] | ((w[i + 1] << 32) if s > 29 else 0)
        out[k] = (stream >> s) & 0x7
    return out.to(torch.int32)


# portq: ports gptqllama:quant.py::Quant3Linear @1eb985a
class Packed3Linear(nn.Module):
    """Inputs a multiple of 1024. zeros holds zero-point times scale."""

    # portq: ports gptqllama:quant.py::Quant3Linear.__init__ @1eb985a
    def __init__(self, infeatures, outfeatures):
        super().__init__()
        self.register_buffer("zeros", torch.zeros((outfeatures, 1)))
        self.register_buffer("scales", torch.zeros((outfeatures, 1)))
        self.register_buffer("bias", torch.zeros(outfeatures))
        self.register_buffer("qweight", torch.zeros((infeatures // SLAB * SLAB_WORDS, outfeatures), dtype=torch.int))

    # portq: ports gptqllama:quant.py::Quant3Linear.pack @1eb985a
    def pack(self, linear, scales, zeros):
        self.zeros = zeros * scales
        self.scales = scales.clone()
        self.bias = linear.bias.clone()
        codes = torch.round((linear.weight.data + self.zeros) / self.scales).to(torch.int)
        self.qweight = pack_codes3(codes.t().contiguous().cpu()).to(linear.weight.device)

    # portq: ports gptqllama:quant.py::Quant3Linear.forward @1eb985a
    def forward(self, x):
        if x.shape[-1] != x.numel():
            raise ValueError("Only supports a single token currently.")
        outshape = list(x.shape)
        outshape[-1] = self.bias.numel()
        y = self.bias.clone()
        dtype = x.dtype
        matvec3(x.float().reshape(-1), self.qweight, y, self.scales, self.zeros)
        return y.to(dtype).reshape(outshape)


# portq: ports gptqllama:quant.py::make_quant3 @1eb985a
def swap_linears(module, names, name=""):
    if isinstance(module, Packed3Linear):
        return
    for attr in dir(module):
        child = getattr(module, attr)
        full = name + "." + attr if name != "" else attr
        if full in names:
            setattr(module, attr, Packed3Linear(child.in_features, child.out_features))
    for sub, child in module.named_children():
        swap_linears(child, names, name + "." + sub if name != "" else sub)
