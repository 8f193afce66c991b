"""The engine's prefill attention on the vendored MInference ops against
plain torch fp32 references.

Runs where the scorer has written the vendored modules, on a CUDA device or
on the CPU under TRITON_INTERPRET=1. Where the index builder is not built as
minference.cuda, a stand-in written here from the merge it performs takes
its place (per row block, the key blocks covering its slashes and the
vertical columns left of them); where pycuda or flash_attn is missing (the
block-sparse module imports them at the top and uses neither), empty
stand-ins take theirs. Tolerance 2e-2 absolute on outputs of magnitude
about 1 (fp16 inputs)."""

import importlib.util
import sys
import types
from pathlib import Path

import pytest
import torch

TREE = Path(__file__).resolve().parents[1]
if not (TREE / "minference/ops/pit_sparse_flash_attention_v2.py").exists():
    pytest.skip("the vendored modules are written by the scorer", allow_module_level=True)

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOL = 2e-2
BLOCK = 64


def _index_rows(length, vertical, slash):
    """Per row block of one (batch, head): block starts and columns."""
    out = []
    for r in range(-(-length // BLOCK)):
        hi_m = (r + 1) * BLOCK
        ranges = []
        for d in (max(hi_m - s, BLOCK) for s in slash if s < hi_m):
            if not ranges or d > ranges[-1][1] + BLOCK:
                ranges.append([d - BLOCK, d])
            elif d > ranges[-1][1]:
                ranges[-1][1] += BLOCK
        starts = [s for lo, hi in ranges for s in range(lo, hi, BLOCK)]
        cols, ri = [], 0
        for c in vertical:
            while ri + 1 < len(ranges) and c >= ranges[ri][1]:
                ri += 1
            if c < ranges[ri][0]:
                cols.append(c)
            if c >= hi_m:
                break
        out.append((starts, cols))
    return out


def _convert_vertical_slash_indexes(seqlens, vertical_indexes, slash_indexes, context_size, block_size_M, block_size_N):
    assert block_size_M == block_size_N == BLOCK
    batch, heads, nnz_s = slash_indexes.shape
    nnz_v = vertical_indexes.shape[-1]
    rows = -(-context_size // BLOCK)
    count, offset = torch.zeros(batch, heads, rows, dtype=torch.int32), torch.zeros(batch, heads, rows, nnz_s, dtype=torch.int32)
    ccount, cindex = torch.zeros(batch, heads, rows, dtype=torch.int32), torch.zeros(batch, heads, rows, nnz_v, dtype=torch.int32)
    for b in range(batch):
        for h in range(heads):
            rows_of = _index_rows(int(seqlens[b]), vertical_indexes[b, h].tolist(), slash_indexes[b, h].tolist())
            for r, (starts, cols) in enumerate(rows_of):
                count[b, h, r], ccount[b, h, r] = len(starts), len(cols)
                offset[b, h, r, :len(starts)] = torch.tensor(starts, dtype=torch.int32)
                cindex[b, h, r, :len(cols)] = torch.tensor(cols, dtype=torch.int32)
    return [t.to(seqlens.device) for t in (count, offset, ccount, cindex)]


try:
    import minference.cuda  # noqa: F401
except ImportError:
    sys.modules["minference.cuda"] = types.ModuleType("minference.cuda")
    sys.modules["minference.cuda"].convert_vertical_slash_indexes = _convert_vertical_slash_indexes
for missing in ("pycuda", "pycuda.autoprimaryctx", "pycuda.compiler", "flash_attn"):
    try:
        importlib.import_module(missing)
    except ImportError:
        sys.modules[missing] = types.ModuleType(missing)
sys.modules["pycuda.compiler"].__dict__.setdefault("SourceModule", None)
sys.modules["flash_attn"].__dict__.setdefault("flash_attn_varlen_func", None)

from engine import prefill_attention  # noqa: E402
from minference.ops.block_sparse_flash_attention import _build_block_index  # noqa: E402


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).half().to(DEVICE)


def _ref_attention(q, k, v, mask):
    s = (q.float() @ k.float().transpose(-1, -2)) * q.shape[-1] ** -0.5
    return torch.softmax(s.masked_fill(~mask, -torch.inf), dim=-1) @ v.float()


def test_engine_with_budgets_covering_everything_is_dense_causal_attention():
    length = 150
    q, k, v = (_randn(1, 2, length, 16, seed=s) for s in (8, 9, 10))
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    want = torch.stack([_ref_attention(q[0, h].cpu(), k[0, h].cpu(), v[0, h].cpu(), causal) for h in range(2)])
    for pattern in (("vertical_and_slash", length, length), ("block_sparse", 8)):
        out = prefill_attention(q, k, v, pattern)
        assert (out[0].float().cpu() - want).abs().max() < TOL, pattern


def test_engine_vertical_and_slash_matches_the_mask_of_its_index():
    length = 200
    q, k, v = (_randn(1, 2, length, 32, seed=s) for s in (1, 2, 3))
    import engine.prefill as prefill

    v_idx, s_idx = prefill._estimate_vertical_slash(q, k, 6, 70)
    out = prefill_attention(q, k, v, ("vertical_and_slash", 6, 70))
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    for h in range(2):
        vertical = sorted(v_idx[0, h].tolist())
        slash = sorted(s_idx[0, h].tolist(), reverse=True)
        mask = torch.zeros(4 * BLOCK, 4 * BLOCK, dtype=torch.bool)
        for r, (starts, cols) in enumerate(_index_rows(length, vertical, slash)):
            for s in starts:
                mask[r * BLOCK:(r + 1) * BLOCK, s:s + BLOCK] = True
            for c in cols:
                mask[r * BLOCK:(r + 1) * BLOCK, c] = True
        want = _ref_attention(q[0, h].cpu(), k[0, h].cpu(), v[0, h].cpu(), mask[:length, :length] & causal)
        assert (out[0, h].float().cpu() - want).abs().max() < TOL


def test_engine_block_sparse_matches_the_mask_of_its_index():
    length = 180
    q, k, v = (_randn(1, 2, length, 16, seed=s) for s in (4, 5, 6))
    out = prefill_attention(q, k, v, ("block_sparse", 2))
    padded = 4 * BLOCK
    pad = lambda t: torch.nn.functional.pad(t, (0, 0, 0, padded - length))
    index = _build_block_index(pad(q), pad(k), 2).cpu()
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    for h in range(2):
        mask = torch.zeros(padded, padded, dtype=torch.bool)
        for r in range(index.shape[-2]):
            for j in index[0, h, r, :min(r + 1, index.shape[-1])].tolist():
                mask[r * BLOCK:(r + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK] = True
        want = _ref_attention(q[0, h].cpu(), k[0, h].cpu(), v[0, h].cpu(), mask[:length, :length] & causal)
        assert (out[0, h].float().cpu() - want).abs().max() < TOL
