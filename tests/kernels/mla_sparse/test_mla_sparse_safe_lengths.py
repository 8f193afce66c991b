"""prepare_sparse_mla_safe_lengths: dummy slot for empty rows, nothing else written."""
from __future__ import annotations

import pytest
import torch

from portq_kernels.mla_sparse import prepare_sparse_mla_safe_lengths
from portq_kernels.mla_sparse import reference as ref


@pytest.mark.parametrize("num_tokens", [1, 259, 512])
def test_strided_views_and_partial_tiles(device, num_tokens):
    """Counts are column 0 of a [n, 2] storage, indices every other column of a
    [n, 256] storage: only [n, 0] of empty rows may change."""
    g = torch.Generator().manual_seed(num_tokens)
    counts_storage = torch.randint(1, 300, (num_tokens, 2), generator=g, dtype=torch.int32)
    counts_storage = counts_storage.to(device)
    counts = counts_storage[:, 0]
    counts[::3] = 0
    original_counts = counts_storage.clone()
    indices_storage = torch.randint(1, 10**6, (num_tokens, 256), generator=g,
                                    dtype=torch.int32).to(device)
    indices = indices_storage[:, ::2]
    expected_storage = indices_storage.clone()
    expected_safe = ref.prepare_sparse_mla_safe_lengths(expected_storage[:, ::2], counts.clone())

    safe = prepare_sparse_mla_safe_lengths(indices, counts)

    assert safe.dtype == torch.int32 and safe.is_contiguous()
    assert torch.equal(safe, expected_safe)
    assert torch.equal(safe, counts.clamp(min=1))
    assert torch.equal(indices_storage, expected_storage)
    assert torch.equal(counts_storage, original_counts)
    assert bool((indices_storage[::3, 0] == 0).all())


def test_no_empty_rows_writes_nothing(device):
    counts = torch.arange(1, 11, dtype=torch.int32, device=device)
    indices = torch.full((10, 4), 7, dtype=torch.int32, device=device)
    safe = prepare_sparse_mla_safe_lengths(indices, counts)
    assert torch.equal(safe, counts) and bool((indices == 7).all())


def test_zero_rows(device):
    safe = prepare_sparse_mla_safe_lengths(
        torch.empty((0, 8), dtype=torch.int32, device=device),
        torch.empty((0,), dtype=torch.int32, device=device))
    assert safe.shape == (0,)


@pytest.mark.parametrize("case", ["indices dtype", "counts dtype", "indices 1-D", "counts 2-D",
                                  "row mismatch", "no columns"])
def test_bad_arguments_raise(device, case):
    indices = torch.zeros((4, 8), dtype=torch.int32, device=device)
    counts = torch.zeros((4,), dtype=torch.int32, device=device)
    bad = {
        "indices dtype": (indices.long(), counts),
        "counts dtype": (indices, counts.long()),
        "indices 1-D": (indices[0], counts),
        "counts 2-D": (indices, counts[:, None]),
        "row mismatch": (indices[:3], counts),
        "no columns": (indices[:, :0], counts),
    }[case]
    # A wrong dtype is a TypeError, as everywhere in portq_kernels.validation.
    with pytest.raises(TypeError if case.endswith("dtype") else ValueError):
        prepare_sparse_mla_safe_lengths(*bad)


def test_non_tensor_raises(device):
    with pytest.raises(TypeError):
        prepare_sparse_mla_safe_lengths([[0]], torch.zeros(1, dtype=torch.int32))
