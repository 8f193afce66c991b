"""Merging two partial attention results over disjoint key sets through
their log-sum-exp. Packed layout: out (tokens, heads, dim) in fp32, lse
(tokens, heads, 1) in fp32; a block's lse arrives as (heads, tokens)."""

import torch


# portq: ports ringflashattn:ring_flash_attn/utils.py::_update_out_and_lse @10d992c
def _merge_pair(acc_out, acc_lse, part_out, part_lse):
    part_out = part_out.float()
    part_lse = part_lse.transpose(-2, -1).unsqueeze(-1)
    merged_lse = acc_lse + torch.log(1 + torch.exp(part_lse - acc_lse))
    merged_out = torch.exp(acc_lse - merged_lse) * acc_out + torch.exp(part_lse - merged_lse) * part_out
    return merged_out, merged_lse


# portq: ports ringflashattn:ring_flash_attn/utils.py::update_out_and_lse @10d992c
# portq: not-carried ringflashattn:ring_flash_attn/utils.py::flatten_varlen_lse -- the Triton layout kernels are the only path: no torch fallback
# portq: not-carried ringflashattn:ring_flash_attn/utils.py::unflatten_varlen_lse -- the Triton layout kernels are the only path: no torch fallback
def update_out_and_lse(acc_out, acc_lse, part_out, part_lse, rows=None):
    """Fold one block's (out, lse) into the running pair; the first call
    (acc_out None) starts it. `rows` restricts the merge to a slice of the
    running pair, never on the first call."""
    if acc_out is None:
        if rows is not None:
            raise RuntimeError("the first merge cannot take a row slice")
        return part_out.float(), part_lse.transpose(-2, -1).unsqueeze(-1)
    if rows is None:
        return _merge_pair(acc_out, acc_lse, part_out, part_lse)
    sub_out, sub_lse = _merge_pair(acc_out[rows], acc_lse[rows], part_out, part_lse)
    acc_out[rows], acc_lse[rows] = sub_out, sub_lse
    return acc_out, acc_lse
