"""Argument checks shared by the KV-cache wrappers.

Every public op validates before it launches, so a wrong argument is a
``TypeError``/``ValueError`` that names the argument and what was expected,
never a GPU fault or a silently wrong result. Checks on tensor metadata cost
nothing; checks on index *values* (non-negative ``seq_starts``, slots inside the
cache) need one device-to-host read, which also synchronises the stream. They
can be turned off for a block of calls with :func:`trusted_index_values` by a
caller that built and checked those tensors itself (the in-tree MLA prefill
callers do), or globally with :data:`CHECK_INDEX_VALUES`, and they are skipped
while a CUDA graph is being captured (no host read is possible there). The kernels additionally never touch memory outside the tensors they
were given, whatever the index values (see the gather kernels' guards).
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import operator

import torch

from ._formats import ELEMENT_FORMATS, WRITE_FORMATS, Conversion, supported

#: Read index tensors back to the host to check their values before launching.
CHECK_INDEX_VALUES = True

_TRUSTED_INDEX_VALUES = contextvars.ContextVar("portq_kv_cache_trusted_index_values", default=False)


@contextlib.contextmanager
def trusted_index_values():
    """Skip the host reads of index values for the calls inside this block.

    For callers that built the index tensors themselves and validated them
    where they were made (on the host, before upload): the per-call
    device-to-host read would otherwise stall the stream on every launch. The
    kernels' own guards still keep every access inside its tensor.
    """
    token = _TRUSTED_INDEX_VALUES.set(True)
    try:
        yield
    finally:
        _TRUSTED_INDEX_VALUES.reset(token)

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
ONE_BYTE_DTYPES = (torch.uint8, torch.int8, torch.float8_e4m3fn, torch.float8_e5m2)


def tensor(name: str, value, *, dtypes=None, ndim=None, device=None) -> torch.Tensor:
    """``value`` is a tensor of one of ``dtypes`` with ``ndim`` dims on ``device``."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if dtypes is not None and value.dtype not in dtypes:
        want = " or ".join(str(d).replace("torch.", "") for d in dtypes)
        raise TypeError(f"{name} must be {want}, got {str(value.dtype).replace('torch.', '')}")
    if ndim is not None and value.dim() not in ((ndim,) if isinstance(ndim, int) else ndim):
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(value.shape)}")
    if device is not None and value.device != device:
        raise ValueError(f"{name} must be on {device} (the cache's device), got {value.device}")
    return value


def index_tensor(name: str, value, device, *, length=None, dtype=torch.int32) -> torch.Tensor:
    """A 1-D integer index tensor (int32 unless said otherwise) on ``device``."""
    tensor(name, value, dtypes=(dtype,), ndim=1, device=device)
    if length is not None and value.shape[0] != length:
        raise ValueError(f"{name} must have {length} entries, got {value.shape[0]}")
    return value


def integer(name: str, value, *, minimum=0) -> int:
    """An integer ``>= minimum``: a Python or numpy int (bools and tensors are refused)."""
    if isinstance(value, (bool, torch.Tensor)) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = operator.index(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def unit_inner_stride(name: str, value: torch.Tensor) -> None:
    """The innermost dimension is contiguous (rows may be strided)."""
    if value.dim() and value.shape[-1] > 1 and value.stride(-1) != 1:
        raise ValueError(f"{name} must have a contiguous last dimension, got strides {value.stride()}")


def contiguous_trailing(name: str, value: torch.Tensor, first_dim: int) -> int:
    """Dimensions ``first_dim..`` form one dense run; returns their element count."""
    expected = 1
    for dim in range(value.dim() - 1, first_dim - 1, -1):
        if value.shape[dim] > 1 and value.stride(dim) != expected:
            raise ValueError(
                f"{name} must be contiguous from dimension {first_dim} on, "
                f"got shape {tuple(value.shape)} strides {value.stride()}"
            )
        expected *= value.shape[dim]
    return expected


def paged_cache(name: str, value, *, ndim=3) -> torch.Tensor:
    """``[num_blocks, block_size, entry...]`` with a positive block size."""
    tensor(name, value, ndim=ndim if ndim else None)
    if value.dim() < 3:
        raise ValueError(f"{name} must be [num_blocks, block_size, entry...], got shape {tuple(value.shape)}")
    if value.shape[1] < 1:
        raise ValueError(f"{name} must have block_size >= 1, got shape {tuple(value.shape)}")
    return value


def scale_tensor(name: str, value, device) -> torch.Tensor:
    """A float32 tensor with at least one element; element 0 is the scale."""
    tensor(name, value, dtypes=(torch.float32,), device=device)
    if value.numel() < 1:
        raise ValueError(f"{name} must hold at least one element (element 0 is read)")
    return value


def block_table(value, device, num_reqs: int, what: str = "requests") -> torch.Tensor:
    """int32 ``[>= num_reqs, width]`` with a contiguous last dimension."""
    tensor("block_table", value, dtypes=(torch.int32,), ndim=2, device=device)
    if value.shape[0] < num_reqs:
        raise ValueError(
            f"block_table has {value.shape[0]} rows but {num_reqs} {what} need one row each"
        )
    unit_inner_stride("block_table", value)
    return value


def element_conversion(kv_cache_dtype) -> Conversion:
    """Map a per-element ``kv_cache_dtype`` string (the gather's vocabulary)."""
    if not isinstance(kv_cache_dtype, str):
        raise TypeError(f"kv_cache_dtype must be a str, got {type(kv_cache_dtype).__name__}")
    if kv_cache_dtype not in ELEMENT_FORMATS:
        hint = ""
        if kv_cache_dtype in WRITE_FORMATS:
            hint = (
                f" ({kv_cache_dtype!r} entries are not per-element: read them with "
                f"cp_gather_and_upconvert_{'fp8' if kv_cache_dtype.startswith('fp8') else 'nvfp4'}_kv_cache)"
            )
        raise ValueError(
            f"kv_cache_dtype {kv_cache_dtype!r} is not supported here; expected one of "
            f"{supported(ELEMENT_FORMATS)}{hint}"
        )
    return ELEMENT_FORMATS[kv_cache_dtype]


def non_negative_values(name: str, value: torch.Tensor | None) -> None:
    """Every entry of ``value`` is >= 0 (one host read; see module docstring)."""
    if value is None or value.numel() == 0 or not _may_read_values(value):
        return
    smallest = int(value.min())
    if smallest < 0:
        raise ValueError(f"{name} must be non-negative, found {smallest}")


def below(name: str, value: torch.Tensor, bound: int, what: str) -> None:
    """Every entry of ``value`` is < ``bound`` (one host read; see module docstring)."""
    if value.numel() == 0 or not _may_read_values(value):
        return
    largest = int(value.max())
    if largest >= bound:
        raise ValueError(f"{name} holds {largest}, but {what} is {bound}")


def _may_read_values(value: torch.Tensor) -> bool:
    if not CHECK_INDEX_VALUES or _TRUSTED_INDEX_VALUES.get():
        return False
    return not (value.is_cuda and torch.cuda.is_current_stream_capturing())


def next_power_of_2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))
