"""Act-order sequentialisation, host side in PyTorch: the weight's rows are
reordered so that each group's rows are contiguous (stable in the original
row order), with the column map x_map (new row -> original row) that the
activation is remapped by, and the sequential group index, pairs of
(group, rows left in the group from this one, inclusive) per row, int16."""

import torch


def _unpack_rows(w):
    shifts = torch.arange(0, 32, 4, device=w.device, dtype=torch.int32)
    codes = (w[:, None, :] >> shifts[None, :, None]) & 0xF
    return codes.reshape(w.shape[0] * 8, w.shape[1])


def _pack_rows(codes):
    shifts = torch.arange(0, 32, 4, device=codes.device, dtype=torch.int32)
    grouped = codes.view(-1, 8, codes.shape[1]).to(torch.int64) << shifts.to(torch.int64)[None, :, None]
    packed = grouped.sum(dim=1)
    return torch.where(packed >= 2**31, packed - 2**32, packed).to(torch.int32)


# portq: ports exllama:exllama_ext/cuda_func/q4v2_sequential.cu::q4v2_sequential_kernel @3dc7cd9
def _reorder_rows(w, x_map):
    return _pack_rows(_unpack_rows(w)[x_map.long()])


# portq: ports exllama:exllama_ext/cuda_func/q4v2_sequential.cu::q4v2_sequential_cuda @3dc7cd9
def sequentialize(w, g_idx, seq_g_idx, x_map, num_groups):
    """w (height, width) int32 rewritten in place; seq_g_idx (height*8*2,)
    int16 and x_map (height*8,) int32 filled."""
    rows = w.shape[0] * 8
    g = g_idx.long()
    counts = torch.bincount(g, minlength=num_groups)
    order = torch.sort(g, stable=True).indices
    x_map.copy_(order.to(torch.int32))
    sorted_groups = g[order]
    starts = torch.cumsum(counts, 0) - counts
    position = torch.arange(rows, device=w.device) - starts[sorted_groups]
    remaining = counts[sorted_groups] - position
    pairs = torch.stack([sorted_groups, remaining], dim=1).reshape(-1)
    seq_g_idx.copy_(pairs.to(torch.int16))
    w.copy_(_reorder_rows(w, x_map))
