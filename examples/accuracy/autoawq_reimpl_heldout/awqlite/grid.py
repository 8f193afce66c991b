"""The asymmetric grouped grid: per group of `q_group_size` inputs, the
step is (max - min) / (2**n_bit - 1) floored at 1e-5 and the zero point is
-round(min / step) clamped to the code range; a weight goes to
(clamp(round(w / step) + zero, 0, 2**n_bit - 1) - zero) * step. Whole-model
blocks are swapped for packed layers by quantize_blocks."""

import torch
from torch import nn

# portq: not-carried autoawq:awq/quantize/quantizer.py::pseudo_quantize_tensor[zero_point] -- symmetric grid, never used by the engine
# portq: not-carried autoawq:awq/quantize/quantizer.py::pseudo_quantize_tensor[inplace] -- the engine never quantises in place
# portq: not-carried autoawq:awq/quantize/quantizer.py::pseudo_quantize_model_weight -- fake-quantised whole models: the engine packs instead


# portq: ports autoawq:awq/quantize/quantizer.py::pseudo_quantize_tensor @460d6d4
def fake_quantize(w, n_bit=8, q_group_size=-1, get_scale_zp=False):
    shape = w.shape
    if q_group_size > 0:
        if shape[-1] % q_group_size:
            raise ValueError(f"last dim {shape[-1]} is not a multiple of the group {q_group_size}")
        w = w.reshape(-1, q_group_size)
    if w.dim() != 2:
        raise ValueError("expected a 2-D weight or a grouped one")
    hi = w.amax(dim=1, keepdim=True)
    lo = w.amin(dim=1, keepdim=True)
    top = 2**n_bit - 1
    step = (hi - lo).clamp(min=1e-5) / top
    zero = (-torch.round(lo / step)).clamp_(0, top)
    if torch.isnan(step).any() or torch.isnan(w).any():
        raise ValueError("NaN in the weight or its step")
    out = (torch.clamp(torch.round(w / step) + zero, 0, top) - zero) * step
    out = out.reshape(shape)
    if get_scale_zp:
        return out, step.view(shape[0], -1), zero.view(shape[0], -1)
    return out


def _linears(block):
    return {name: m for name, m in block.named_modules() if isinstance(m, nn.Linear)}


def _replace(block, dotted, new):
    *path, leaf = dotted.split(".")
    owner = block
    for part in path:
        owner = owner[int(part)] if part.isdigit() else getattr(owner, part)
    setattr(owner, leaf, new)


# portq: ports autoawq:awq/quantize/quantizer.py::real_quantize_model_weight @460d6d4
@torch.no_grad()
def quantize_blocks(blocks, w_bit, q_config, init_only=False):
    """Swap every nn.Linear of each block for a Packed4Linear, quantised from
    its weight on the grouped grid unless init_only (then an empty shell to
    load a state dict into)."""
    from .packed import Packed4Linear

    if not q_config.get("zero_point", True):
        raise ValueError("only the zero-point grid is carried")
    group = q_config["q_group_size"]
    for block in blocks:
        for name, linear in _linears(block).items():
            if init_only:
                packed = Packed4Linear.from_float(linear, w_bit, group, True)
            else:
                linear.weight.data, step, zero = fake_quantize(
                    linear.weight.data, n_bit=w_bit, q_group_size=group, get_scale_zp=True
                )
                packed = Packed4Linear.from_float(
                    linear, w_bit, group, False, step.t().contiguous(), zero.t().contiguous()
                )
            _replace(block, name, packed)
