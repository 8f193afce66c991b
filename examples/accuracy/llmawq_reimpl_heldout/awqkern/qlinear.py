"""The AWQ-quantised linear layer: packs a float weight with given group
scales and zero points into the GEMM's layout, and runs the W4A16 GEMM."""

import torch
from torch import nn

from .dequant import ORDER
from .gemm import w4a16_gemm

# portq: not-carried llmawq:awq/quantize/qmodule.py::ScaledActivation -- the engine folds activation scales into the next layer's weights


def pack_int4(codes):
    """(R, C) int codes in 0..15 -> (R, C/8) int32, nibble p of each word
    holding column ORDER[p] of its group of eight."""
    rows, cols = codes.shape
    codes = codes.to(torch.int32)
    packed = torch.zeros((rows, cols // 8), dtype=torch.int32, device=codes.device)
    for word in range(cols // 8):
        for p in range(8):
            packed[:, word] |= codes[:, word * 8 + ORDER[p]] << (4 * p)
    return packed


# portq: ports llmawq:awq/quantize/qmodule.py::WQLinear @5f377ef
class AWQLinear(nn.Module):
    """y = x @ W^T (+ bias) with W stored as 4-bit codes, per-group fp16
    scales and packed 4-bit zero points along the input dimension."""

    # portq: ports llmawq:awq/quantize/qmodule.py::WQLinear.__init__ @5f377ef
    def __init__(self, w_bit, group_size, in_features, out_features, bias, dev):
        super().__init__()
        if w_bit != 4:
            raise NotImplementedError("only 4-bit weights")
        self.in_features = in_features
        self.out_features = out_features
        self.w_bit = w_bit
        self.group_size = in_features if group_size == -1 else group_size
        assert in_features % self.group_size == 0
        assert out_features % 8 == 0
        groups = in_features // self.group_size
        self.register_buffer("qweight", torch.zeros((in_features, out_features // 8), dtype=torch.int32, device=dev))
        self.register_buffer("qzeros", torch.zeros((groups, out_features // 8), dtype=torch.int32, device=dev))
        self.register_buffer("scales", torch.zeros((groups, out_features), dtype=torch.float16, device=dev))
        if bias:
            self.register_buffer("bias", torch.zeros(out_features, dtype=torch.float16, device=dev))
        else:
            self.bias = None

    # portq: ports llmawq:awq/quantize/qmodule.py::WQLinear.from_linear @5f377ef
    @classmethod
    def from_float(cls, linear, w_bit, group_size, init_only=False, scales=None, zeros=None):
        """scales and zeros are (in_features / group_size, out_features)."""
        layer = cls(w_bit, group_size, linear.in_features, linear.out_features,
                    linear.bias is not None, linear.weight.device)
        if init_only:
            return layer
        assert scales is not None and zeros is not None
        layer.scales = scales.clone().half()
        if linear.bias is not None:
            layer.bias = linear.bias.clone().half()
        per_row_scale = layer.scales.repeat_interleave(layer.group_size, dim=0)   # (K, N)
        per_row_shift = (zeros * scales).repeat_interleave(layer.group_size, dim=0)
        codes = torch.round((linear.weight.data.t() + per_row_shift) / per_row_scale).to(torch.int32)
        layer.qweight = pack_int4(codes)
        layer.qzeros = pack_int4(zeros.to(torch.int32))
        return layer

    # portq: ports llmawq:awq/quantize/qmodule.py::WQLinear.forward @5f377ef
    @torch.no_grad()
    def forward(self, x):
        shape = x.shape[:-1] + (self.out_features,)
        y = w4a16_gemm(x.reshape(-1, x.shape[-1]), self.qweight, self.scales, self.qzeros, 8)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(shape)
