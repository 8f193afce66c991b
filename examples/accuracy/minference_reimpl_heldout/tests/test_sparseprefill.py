"""The sparse prefill kernels and the engine against plain PyTorch fp32
references, on a CUDA device or on the CPU under TRITON_INTERPRET=1.

The index builder is bit-exact against a loop over the same merge, and its
block ranges and columns cover every slash and vertical; the attention
kernels match a masked fp32 softmax over the mask their index encodes, to
2e-2 absolute (fp16 inputs, outputs of magnitude about 1)."""

import torch

from engine import prefill_attention
from sparseprefill.block_sparse import block_sparse_attention, build_block_index
from sparseprefill.vs_attention import vertical_slash_sparse_attention
from sparseprefill.vs_index import convert_vertical_slash_indexes

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOL = 2e-2
BLOCK = 64


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).half().to(DEVICE)


def _ref_index(length, vertical, slash, nnz_v, nnz_s):
    """One (batch, head): per row block, the block starts and columns."""
    rows = -(-length // BLOCK)
    out = []
    for r in range(rows):
        hi_m = (r + 1) * BLOCK
        starts, cols = [], []
        diags = [max(hi_m - d, BLOCK) for d in slash if d < hi_m]
        ranges = []
        for d in diags:
            if not ranges:
                ranges.append([d - BLOCK, d])
            elif d > ranges[-1][1] + BLOCK:
                ranges.append([d - BLOCK, d])
            elif d > ranges[-1][1]:
                ranges[-1][1] += BLOCK
        if not ranges:
            ranges = [[0, BLOCK]]
        for lo, hi in ranges:
            starts += list(range(lo, hi, BLOCK))
        # a vertical is a column when it lies left of the range that is open
        # when the merge reaches it (ranges only move right)
        ri = 0
        for c in vertical:
            while ri + 1 < len(ranges) and c >= ranges[ri][1]:
                ri += 1
            if c < ranges[ri][0]:
                cols.append(c)
            if c >= hi_m:
                break
        out.append((starts[:nnz_s], cols[:nnz_v]))
    return out


def _mask_from_index(length, padded, count, offset, ccount, cindex):
    mask = torch.zeros(padded, padded, dtype=torch.bool)
    for r in range(count.shape[0]):
        rows = slice(r * BLOCK, (r + 1) * BLOCK)
        for i in range(count[r]):
            s = int(offset[r, i])
            mask[rows, s:s + BLOCK] = True
        for i in range(ccount[r]):
            mask[rows, int(cindex[r, i])] = True
    return (mask & torch.ones(padded, padded, dtype=torch.bool).tril())[:length, :length]


def _ref_attention(q, k, v, mask):
    s = (q.float() @ k.float().transpose(-1, -2)) * q.shape[-1] ** -0.5
    return torch.softmax(s.masked_fill(~mask, -torch.inf), dim=-1) @ v.float()


def _vs_inputs(length, seed):
    g = torch.Generator().manual_seed(seed)
    vertical = sorted(set([0, 1] + torch.randint(0, length, (6,), generator=g).tolist()))
    slash = sorted(set([0, 1, 2] + torch.randint(0, length, (5,), generator=g).tolist()), reverse=True)
    return vertical, slash


def test_index_builder_is_bit_exact_and_covers_every_slash_and_vertical():
    length = 300
    pairs = [_vs_inputs(length, seed) for seed in range(2)]
    nnz_v = max(len(v) for v, _ in pairs)
    nnz_s = max(len(s) for _, s in pairs)
    vert = torch.tensor([v + [v[-1]] * (nnz_v - len(v)) for v, _ in pairs], dtype=torch.int32).view(1, 2, nnz_v)
    slsh = torch.tensor([s + [s[-1]] * (nnz_s - len(s)) for _, s in pairs], dtype=torch.int32).view(1, 2, nnz_s)
    seqlens = torch.tensor([length], dtype=torch.int32, device=DEVICE)
    count, offset, ccount, cindex = (t.cpu() for t in convert_vertical_slash_indexes(
        seqlens, vert.to(DEVICE), slsh.to(DEVICE), length, BLOCK, BLOCK))
    for h in range(2):
        want = _ref_index(length, vert[0, h].tolist(), slsh[0, h].tolist(), nnz_v, nnz_s)
        for r, (starts, cols) in enumerate(want):
            assert count[0, h, r] == len(starts) and offset[0, h, r, :len(starts)].tolist() == starts
            assert ccount[0, h, r] == len(cols) and cindex[0, h, r, :len(cols)].tolist() == cols
        mask = _mask_from_index(length, 5 * BLOCK, count[0, h], offset[0, h], ccount[0, h], cindex[0, h])
        i = torch.arange(length)
        for d in slsh[0, h].tolist():
            assert mask[i[d:], i[d:] - d].all(), d
        for c in vert[0, h].tolist():
            assert mask[c:, c].all(), c


def test_vertical_slash_attention_matches_masked_softmax():
    length = 200
    q, k, v = (_randn(1, 2, length, 32, seed=s) for s in (1, 2, 3))
    vertical, slash = _vs_inputs(length, 7)
    v_idx = torch.tensor(vertical, device=DEVICE).expand(1, 2, -1)
    s_idx = torch.tensor(slash, device=DEVICE).expand(1, 2, -1)
    out = vertical_slash_sparse_attention(q, k, v, v_idx, s_idx)
    seqlens = torch.tensor([length], dtype=torch.int32, device=DEVICE)
    index = convert_vertical_slash_indexes(seqlens, v_idx.to(torch.int32).contiguous(),
                                           s_idx.to(torch.int32).contiguous(), length, BLOCK, BLOCK)
    count, offset, ccount, cindex = (t.cpu() for t in index)
    for h in range(2):
        mask = _mask_from_index(length, 4 * BLOCK, count[0, h], offset[0, h], ccount[0, h], cindex[0, h])
        want = _ref_attention(q[0, h].cpu(), k[0, h].cpu(), v[0, h].cpu(), mask)
        assert out.shape == q.shape
        assert (out[0, h].float().cpu() - want).abs().max() < TOL


def test_block_sparse_attention_matches_masked_softmax():
    length = 180
    q, k, v = (_randn(1, 2, length, 16, seed=s) for s in (4, 5, 6))
    out = block_sparse_attention(q, k, v, top_k=2)
    padded = 4 * BLOCK
    pad = lambda t: torch.nn.functional.pad(t, (0, 0, 0, padded - length))
    index = build_block_index(pad(q), pad(k), 2).cpu()
    for h in range(2):
        mask = torch.zeros(padded, padded, dtype=torch.bool)
        for r in range(index.shape[-2]):
            for j in index[0, h, r, :min(r + 1, index.shape[-1])].tolist():
                mask[r * BLOCK:(r + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK] = True
        mask = (mask & torch.ones(padded, padded, dtype=torch.bool).tril())[:length, :length]
        want = _ref_attention(q[0, h].cpu(), k[0, h].cpu(), v[0, h].cpu(), mask)
        assert (out[0, h].float().cpu() - want).abs().max() < TOL


def test_engine_with_budgets_covering_everything_is_dense_causal_attention():
    length = 150
    q, k, v = (_randn(1, 2, length, 16, seed=s) for s in (8, 9, 10))
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    want = torch.stack([_ref_attention(q[0, h].cpu(), k[0, h].cpu(), v[0, h].cpu(), causal) for h in range(2)])
    for pattern in (("vertical_and_slash", length, length), ("block_sparse", 8)):
        out = prefill_attention(q, k, v, pattern)
        assert (out[0].float().cpu() - want).abs().max() < TOL, pattern
