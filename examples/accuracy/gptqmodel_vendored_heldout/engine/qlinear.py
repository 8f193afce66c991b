"""A GPTQ linear layer as the engine runs it on the vendored GPTQModel
kernels: the fused quantised matmul for short (decode) batches, the
dequantise-then-matmul autograd node for long (prefill) ones, and the dense
weight on request. Owns no kernels; the vendored modules are upstream's,
unmodified."""

import torch

import gptqmodel.nn_modules.triton_utils.kernels as fused
from gptqmodel.nn_modules.triton_utils import dequant
from gptqmodel.nn_modules.triton_utils.dequant import dequant248 as dense_weight

# Rows above which dequantising once and calling the dense matmul wins.
PREFILL_ROWS = 32


class GPTQLinear:
    """Packed weight, scales, zeros and group map of one layer, with its bits."""

    def __init__(self, qweight, scales, qzeros, g_idx, bits: int, bias=None):
        self.qweight, self.scales, self.qzeros, self.g_idx = qweight, scales, qzeros, g_idx
        self.bits, self.bias = bits, bias
        self.maxq = (1 << bits) - 1

    def weight(self) -> torch.Tensor:
        """The dequantised fp16 weight, (in_features, out_features)."""
        return dense_weight(self.qweight, self.scales, self.qzeros, self.g_idx, self.bits, maxq=self.maxq)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        if flat.shape[0] > PREFILL_ROWS:
            out = dequant.QuantLinearFunction.apply(flat, self.qweight, self.scales, self.qzeros, self.g_idx,
                                                    self.bits, self.maxq)
        else:
            out = fused.quant_matmul_inference_only_248(flat, self.qweight, self.scales, self.qzeros,
                                                        self.g_idx, self.bits, self.maxq)
        out = out.reshape(*x.shape[:-1], out.shape[-1])
        return out if self.bias is None else out + self.bias
