"""Builders shared by the KV-cache kernel tests: device choice, paged batches with
shuffled block tables, random cache contents without NaN codes, and a byte-level
comparison. The oracle is always ``portq_kernels.kv_cache.reference`` run on CPU
copies, so the GPU run and the interpreter run compare with the same bytes."""
from __future__ import annotations

import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
POISON_FLOAT = -1234.5


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def paged_batch(block_size, lens, starts=None, *, gen, width_extra=1, pool_factor=2, padding=-7):
    """Block table + cu_seq_lens + seq_starts for requests reading
    ``[starts[r], starts[r] + lens[r])``.

    Physical blocks are drawn without replacement from a pool ``pool_factor``
    times larger than needed (random permutation with gaps); each row has
    ``width_extra`` spare columns filled with ``padding`` (never read).
    Returns (block_table, cu_seq_lens, seq_starts or None, num_blocks), on CPU.
    """
    starts_list = list(starts) if starts is not None else [0] * len(lens)
    needed = [-(-(s + n) // block_size) for s, n in zip(starts_list, lens)]
    width = max(needed + [1]) + width_extra
    num_blocks = max(pool_factor * sum(needed), 1) + 3
    pool = torch.randperm(num_blocks, generator=gen)
    table = torch.full((len(lens), width), padding, dtype=torch.int32)
    used = 0
    for req, count in enumerate(needed):
        table[req, :count] = pool[used : used + count].to(torch.int32)
        used += count
    cu = torch.zeros(len(lens) + 1, dtype=torch.int32)
    cu[1:] = torch.tensor(lens, dtype=torch.int64).cumsum(0).to(torch.int32)
    seq_starts = torch.tensor(starts_list, dtype=torch.int32) if starts is not None else None
    return table, cu, seq_starts, num_blocks


def random_fp8_bytes(shape, *, gen, e5m2=False) -> torch.Tensor:
    """Random float8 codes of every finite value (NaN/inf codes replaced)."""
    codes = torch.randint(0, 256, shape, dtype=torch.uint8, generator=gen)
    special = (codes & 0x7C) == 0x7C if e5m2 else (codes & 0x7F) == 0x7F
    return torch.where(special, codes & 0x83, codes)


def random_values(shape, dtype, *, gen, scale=1.0) -> torch.Tensor:
    return (torch.randn(shape, generator=gen) * scale).to(dtype)


def to_device(*tensors):
    return tuple(t.to(DEVICE) if isinstance(t, torch.Tensor) else t for t in tensors)


def assert_same_bits(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Byte-for-byte equality (a NaN-safe, rounding-exact comparison)."""
    actual = actual.detach().cpu().contiguous()
    expected = expected.detach().cpu().contiguous()
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a, e = actual.view(torch.uint8), expected.view(torch.uint8)
    if not torch.equal(a, e):
        width = actual.element_size()
        diff = (a != e).reshape(-1, width).any(1).nonzero().flatten()
        first = int(diff[0])
        raise AssertionError(
            f"{diff.numel()} of {actual.numel()} elements differ; first at flat index {first}: "
            f"got {actual.reshape(-1)[first].item()!r}, expected {expected.reshape(-1)[first].item()!r}"
        )


def poisoned(shape, dtype) -> torch.Tensor:
    """A destination filled with a sentinel (bytes 0xA5 for 1-byte dtypes)."""
    if dtype in (torch.uint8, torch.float8_e4m3fn, torch.float8_e5m2):
        return torch.full(shape, 0xA5, dtype=torch.uint8).view(dtype)
    if dtype in (torch.int16, torch.int32, torch.int64):
        return torch.full(shape, -77, dtype=dtype)
    return torch.full(shape, POISON_FLOAT, dtype=dtype)
