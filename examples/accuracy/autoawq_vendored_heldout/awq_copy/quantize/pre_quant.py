"""The tree's own stand-in for the two helpers the vendored
real_quantize_model_weight imports lazily from its sibling pre_quant: the
engine's models keep their blocks in `blocks`, and a block's linears are
its nn.Linear submodules by dotted name. Not upstream's file."""

from torch import nn


def get_blocks(model):
    return model.blocks


def get_named_linears(module):
    return {name: m for name, m in module.named_modules() if isinstance(m, nn.Linear)}
