"""A stack of residual MLP blocks quantised to 4 bits on the vendored AWQ
modules (upstream's, unmodified): each block's linear inputs are recorded
on calibration tokens, auto_clip_block searches the clipping bounds (its
auto_clip_layer over pseudo_quantize_tensor), apply_clip clamps the
weights, and real_quantize_model_weight puts them on the grid and swaps
every linear for WQLinear.from_linear, whose forward calls the CUDA
extension's gemm_forward_cuda. Owns no kernels."""

import torch
from torch import nn

from awq_copy.quantize.auto_clip import apply_clip, auto_clip_block
from awq_copy.quantize.quantizer import real_quantize_model_weight


class MLPBlock(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Stack(nn.Module):
    def __init__(self, width, hidden, depth):
        super().__init__()
        self.blocks = nn.ModuleList(MLPBlock(width, hidden) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


@torch.no_grad()
def collect_inputs(block, x):
    """Each linear's input on the calibration tokens x, keyed by its name."""
    seen, hooks = {}, []
    for name, m in block.named_modules():
        if isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(lambda mod, args, out, name=name: seen.__setitem__(name, args[0])))
    try:
        block(x)
    finally:
        for h in hooks:
            h.remove()
    return seen


@torch.no_grad()
def calibrate_and_pack(model, x, w_bit=4, q_group_size=128, clip=True):
    """Clip each block's weights on its calibration inputs, then pack the model."""
    q_config = {"zero_point": True, "q_group_size": q_group_size}
    for block in model.blocks:
        if clip:
            apply_clip(block, auto_clip_block(block, w_bit, q_config, collect_inputs(block, x)))
        x = block(x)
    real_quantize_model_weight(model, w_bit, q_config)
    return model
