"""A stack of residual MLP blocks quantised to 4 bits with AWQ's clipping
search: each block's linears see calibration tokens (recorded by forward
hooks), their weights are clamped to the searched bounds, then every
linear is packed into a Packed4Linear whose forward runs the Triton
dequantising GEMM. Owns no kernels."""

import torch
from torch import nn

from awqlite import clamp_to_clips, quantize_blocks, search_clips


class MLPBlock(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


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
def calibrate_and_pack(blocks, x, w_bit=4, q_group_size=128, clip=True):
    """Clip each block's weights on its calibration inputs, then pack all of them."""
    q_config = {"zero_point": True, "q_group_size": q_group_size}
    for block in blocks:
        if clip:
            feats = collect_inputs(block, x)
            clamp_to_clips(block, search_clips(block, w_bit, q_config, feats))
        x = block(x)
    quantize_blocks(blocks, w_bit, q_config)
    return blocks
