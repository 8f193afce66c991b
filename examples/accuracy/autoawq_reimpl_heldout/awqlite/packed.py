"""The 4-bit packed linear layer. Codes q = round((w + zero * step) / step)
are stored eight per int32 word along the outputs in AWQ's interleaved
order: output 8c + j of word c sits at bit 4 * ((j >> 1) + 4 * (j & 1)),
i.e. the word holds outputs 0, 2, 4, 6, 1, 3, 5, 7 from the low nibble up.
The zero points are packed the same way per group; the fp16 steps are one
row per group. forward dequantises (q - zero) * step in the Triton GEMM."""

import torch
from torch import nn

from .dequant_gemm import dequant_gemm

PER_WORD = 8


def interleave_shift(j):
    """Bit offset of output j (mod 8) inside its word."""
    return 4 * ((j >> 1) + 4 * (j & 1))


def _pack_words(codes):
    rows, cols = codes.shape
    words = torch.zeros((rows, cols // PER_WORD), dtype=torch.int32, device=codes.device)
    for j in range(PER_WORD):
        words |= codes[:, j::PER_WORD].to(torch.int32) << interleave_shift(j)
    return words


def unpack_words(words):
    """The (rows, 8 * cols) codes of packed words; the inverse of the pack (an addition of this port's)."""
    rows, cols = words.shape
    out = torch.empty((rows, cols * PER_WORD), dtype=torch.int32, device=words.device)
    for j in range(PER_WORD):
        out[:, j::PER_WORD] = (words >> interleave_shift(j)) & 0xF
    return out


# portq: ports autoawq:awq/quantize/qmodule.py::WQLinear @460d6d4
class Packed4Linear(nn.Module):
    # portq: ports autoawq:awq/quantize/qmodule.py::WQLinear.__init__ @460d6d4
    def __init__(self, w_bit, group_size, in_features, out_features, bias, dev):
        super().__init__()
        if w_bit != 4:
            raise NotImplementedError("only 4-bit codes are packed")
        self.in_features, self.out_features, self.w_bit = in_features, out_features, w_bit
        self.group_size = group_size if group_size != -1 else in_features
        if in_features % self.group_size or out_features % PER_WORD:
            raise ValueError("inputs must fill whole groups and outputs whole words")
        groups = in_features // self.group_size
        self.register_buffer("qweight", torch.zeros((in_features, out_features // PER_WORD), dtype=torch.int32, device=dev))
        self.register_buffer("qzeros", torch.zeros((groups, out_features // PER_WORD), dtype=torch.int32, device=dev))
        self.register_buffer("scales", torch.zeros((groups, out_features), dtype=torch.float16, device=dev))
        if bias:
            self.register_buffer("bias", torch.zeros(out_features, dtype=torch.float16, device=dev))
        else:
            self.bias = None

    # portq: ports autoawq:awq/quantize/qmodule.py::WQLinear.from_linear @460d6d4
    @classmethod
    def from_float(cls, linear, w_bit, group_size, init_only=False, scales=None, zeros=None):
        layer = cls(w_bit, group_size, linear.in_features, linear.out_features, linear.bias is not None, linear.weight.device)
        if init_only:
            return layer
        if scales is None or zeros is None:
            raise ValueError("packing needs the steps and zero points")
        layer.scales = scales.clone().half()
        if linear.bias is not None:
            layer.bias = linear.bias.clone().half()
        per_input = torch.arange(layer.in_features, device=scales.device) // layer.group_size
        step = layer.scales[per_input]  # (in, out)
        offset = (zeros * scales)[per_input]
        codes = torch.round((linear.weight.data.t() + offset) / step).to(torch.int32)
        layer.qweight = _pack_words(codes)
        layer.qzeros = _pack_words(zeros.to(torch.int32))
        return layer

    # portq: ports autoawq:awq/quantize/qmodule.py::WQLinear.forward @460d6d4
    @torch.no_grad()
    def forward(self, x):
        shape = x.shape[:-1] + (self.out_features,)
        out = dequant_gemm(x.reshape(-1, x.shape[-1]), self.qweight, self.scales, self.qzeros, self.group_size)
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(shape)
