"""Argument validation and the index policy shared by every op of ``portq_kernels``.

One message format for every rejected argument: ``"{name} must be {expected},
got {got}"`` on one line, raised as ``TypeError`` (wrong type or dtype) or
``ValueError`` (anything else), before anything is launched. Every host check
of the four packages (``kv_cache``, ``mla_prefix``, ``mla_sparse``,
``mla_prefill``) goes through the helpers here, so the format and the exception
types are the same everywhere. Argument messages carry no op name (the
traceback names the call); only the index policy's messages below, which can
surface after the launch, start with the op. Everything that needs no device
data (types, dtypes, shapes, strides, devices) is checked on the host on every
call; it costs no synchronisation.

Index *values* (block ids, slots, ``seq_starts``, page ids) live on the
device, and reading them back would stall the stream on every call and break
CUDA-graph capture. So the kernels check them where they read them: every
index load is bounds-masked, so no value reads or writes outside its tensor,
and a value that would have done so clears a one-element device flag
(:func:`index_flag`; 1 = every index was in range). What happens next is the
index mode (:func:`index_checks`):

* ``"assert"`` (the default): on CUDA the kernel that finds the bad index
  stops itself (PTX ``trap``, after clearing the flag): the stream's next
  synchronisation raises a CUDA error and the context is lost, as for any
  device-side assert. No host read, no extra launch, capturable in a CUDA
  graph. (A separate ``torch._assert_async`` on the flag was measured first:
  its extra dependent launch cost 1.05-1.08x on 25-35 us gathers.) On the CPU
  (Triton's interpreter) the wrapper raises a ``ValueError`` right after the
  launch.
* ``"debug"`` (``PORTQ_KERNELS_DEBUG=1`` in the environment, or
  ``index_checks("debug")``): the wrapper also reads the index tensors back
  before launching and raises a ``ValueError`` naming the first bad entry,
  e.g. ``seq_starts[1] must be >= 0, got -3``. One host read per call; refused
  with a ``RuntimeError`` while a CUDA graph is being captured.
* ``"record"``: the kernels mask and clear the flag, nothing is asserted; the
  caller reads :func:`index_flag` when it chooses (once per engine step, say)
  and resets it with :func:`reset_index_flag`. The benchmarks time this mode
  as "the unchecked kernel".

What the output holds after an index error found inside a kernel, in every
mode: the programs that saw no bad index have written their rows, so rows
written before the error was seen may differ from their old contents; the
rows that the bad index would have produced are not written (a gather leaves
them untouched; ``gather_kv_b_proj`` computes them from zero rows); nothing
outside the op's output tensors is written, and no input is modified. On CUDA
in the default mode the trap ends the CUDA context (as PyTorch's own device
asserts do), so an engine that wants a Python exception it can catch runs
the debug mode, whose host check raises before anything is launched.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import operator
import os

import numpy as np
import torch
import triton
import triton.language as tl

INDEX_MODES = ("assert", "debug", "record")

_MODE = contextvars.ContextVar("portq_kernels_index_mode", default=None)
_FLAGS: dict[torch.device, torch.Tensor] = {}

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
INTEGER_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
HOST = torch.device("cpu")


def fail(name: str, expected: str, got, exc: type[Exception] = ValueError):
    """Raise the one message format: ``{name} must be {expected}, got {got}``."""
    raise exc(f"{name} must be {expected}, got {got}")


def dtype_name(dtype) -> str:
    """``bfloat16`` for ``torch.bfloat16``: how the messages spell a dtype."""
    return str(dtype).replace("torch.", "")


# --- host checks: metadata only --------------------------------------------------------


def tensor(name: str, value, *, dtypes=None, ndim=None, device=None, contiguous=False,
           device_of: str = "the other tensors") -> torch.Tensor:
    """``value`` is a tensor of one of ``dtypes`` with ``ndim`` dims on ``device``
    (the device of ``device_of``, said in the message)."""
    if not isinstance(value, torch.Tensor):
        fail(name, "a torch.Tensor", type(value).__name__, TypeError)
    if dtypes is not None and value.dtype not in dtypes:
        fail(name, " or ".join(map(dtype_name, dtypes)), dtype_name(value.dtype), TypeError)
    if ndim is not None and value.dim() not in ((ndim,) if isinstance(ndim, int) else ndim):
        dims = ndim if isinstance(ndim, int) else " or ".join(map(str, ndim))
        fail(name, f"a {dims}-D tensor", f"shape {tuple(value.shape)}")
    if device is not None and value.device != device:
        fail(name, f"on {device} (the device of {device_of})", value.device)
    if contiguous and not value.is_contiguous():
        fail(name, "contiguous", f"strides {value.stride()}")
    return value


def index_tensor(name: str, value, device, *, length=None, dtype=torch.int32) -> torch.Tensor:
    """A 1-D integer index tensor (int32 unless said otherwise) on ``device``."""
    tensor(name, value, dtypes=(dtype,), ndim=1, device=device)
    if length is not None and value.shape[0] != length:
        fail(name, f"{length} entries long", value.shape[0])
    return value


def integer(name: str, value, *, minimum=0, maximum=None) -> int:
    """An integer in ``[minimum, maximum]`` (no upper bound when ``maximum`` is
    None): a Python or numpy int (bools and tensors are refused)."""
    if isinstance(value, (bool, torch.Tensor)) or not hasattr(value, "__index__"):
        fail(name, "an int", type(value).__name__, TypeError)
    value = operator.index(value)
    if maximum is not None and not minimum <= value <= maximum:
        fail(name, f"an int in [{minimum}, {maximum}]", value)
    if value < minimum:
        fail(name, f">= {minimum}", value)
    return value


def power_of_two(name: str, value, *, minimum=1) -> int:
    """An integer power of two ``>= minimum`` (tile sizes: ``tl.arange`` needs one)."""
    value = integer(name, value, minimum=minimum)
    if value & (value - 1):
        fail(name, f"a power of two >= {minimum}", value)
    return value


def one_of(name: str, value, options, *, note: str = "", exc: type[Exception] = ValueError):
    """``value`` is one of ``options`` (strings, dtypes...); ``note`` adds a hint."""
    if value not in options:
        fail(name, f"one of {', '.join(map(repr, options))}{note}", repr(value), exc)
    return value


def instance(name: str, value, cls: type):
    """``value`` is a ``cls`` (plan objects the host builds, such as metadata)."""
    if not isinstance(value, cls):
        fail(name, f"a {cls.__name__}", type(value).__name__, TypeError)
    return value


def host_tensor(name: str, value, *, ndim=1) -> torch.Tensor:
    """An integer CPU tensor the host plans from (lengths, offsets): reading it costs no sync."""
    return tensor(name, value, dtypes=INTEGER_DTYPES, ndim=ndim, device=HOST, device_of="the host plan")


def host_array(name: str, value, *, ndim=1) -> np.ndarray:
    """An integer numpy array (array-likes are converted) with ``ndim`` dims."""
    array = np.asarray(value)
    if array.dtype.kind not in "iu" and array.size:
        fail(name, "an integer array", f"dtype {array.dtype}", TypeError)
    if array.ndim != ndim:
        fail(name, f"a {ndim}-D array", f"shape {array.shape}")
    return array


def dim_size(name: str, value: torch.Tensor, expected: int, what: str, *, dim=0) -> None:
    """``value.shape[dim] == expected``; ``what`` says where ``expected`` comes from."""
    if value.shape[dim] != expected:
        size = f"{expected} rows" if dim == 0 else f"{expected} wide in dimension {dim}"
        fail(name, f"{size} ({what})", f"shape {tuple(value.shape)}")


def unit_inner_stride(name: str, value: torch.Tensor) -> None:
    """The innermost dimension is contiguous (rows may be strided)."""
    if value.dim() and value.shape[-1] > 1 and value.stride(-1) != 1:
        fail(name, "contiguous in its last dimension", f"strides {value.stride()}")


def contiguous_trailing(name: str, value: torch.Tensor, first_dim: int) -> int:
    """Dimensions ``first_dim..`` form one dense run; returns their element count."""
    expected = 1
    for dim in range(value.dim() - 1, first_dim - 1, -1):
        if value.shape[dim] > 1 and value.stride(dim) != expected:
            fail(name, f"contiguous from dimension {first_dim} on",
                 f"shape {tuple(value.shape)} strides {value.stride()}")
        expected *= value.shape[dim]
    return expected


def paged_cache(name: str, value, *, ndim=3) -> torch.Tensor:
    """``[num_blocks, block_size, entry...]`` with a positive block size."""
    tensor(name, value, ndim=ndim if ndim else None)
    if value.dim() < 3:
        fail(name, "[num_blocks, block_size, entry...]", f"shape {tuple(value.shape)}")
    if value.shape[1] < 1:
        fail(name, "a cache with block_size >= 1", f"shape {tuple(value.shape)}")
    return value


def scale_tensor(name: str, value, device) -> torch.Tensor:
    """A float32 tensor with at least one element; element 0 is the scale."""
    tensor(name, value, dtypes=(torch.float32,), device=device)
    if value.numel() < 1:
        fail(name, "at least one element (element 0 is read)", "none")
    return value


def block_table(value, device, num_reqs: int, what: str = "requests") -> torch.Tensor:
    """int32 ``[>= num_reqs, width]`` with a contiguous last dimension."""
    tensor("block_table", value, dtypes=(torch.int32,), ndim=2, device=device)
    if value.shape[0] < num_reqs:
        fail("block_table", f"one row for each of the {num_reqs} {what}", f"{value.shape[0]} rows")
    unit_inner_stride("block_table", value)
    return value


def next_power_of_2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


# --- the index policy ------------------------------------------------------------------


def index_mode() -> str:
    """The mode in force: the innermost :func:`index_checks` block, else
    ``"debug"`` when ``PORTQ_KERNELS_DEBUG`` is set to a true value, else ``"assert"``."""
    mode = _MODE.get()
    if mode is not None:
        return mode
    if os.environ.get("PORTQ_KERNELS_DEBUG", "").lower() not in ("", "0", "false", "no"):
        return "debug"
    return "assert"


@contextlib.contextmanager
def index_checks(mode: str):
    """Run the calls inside the block in index mode ``mode`` (see the module docstring)."""
    if mode not in INDEX_MODES:
        fail("mode", f"one of {', '.join(map(repr, INDEX_MODES))}", repr(mode))
    token = _MODE.set(mode)
    try:
        yield
    finally:
        _MODE.reset(token)


@contextlib.contextmanager
def trusted_index_values():
    """Kept for compatibility, does nothing: the wrappers no longer read index
    values back by default, so there is no host read left to skip."""
    yield


def _capturing(device: torch.device) -> bool:
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


def index_flag(device) -> torch.Tensor:
    """The int32 ``[1]`` flag of ``device`` that the kernels clear (set to 0) on an
    out-of-range index; 1 while every index was in range. One per device, made on
    first use (outside graph capture: run every op once before capturing, as
    Triton's compilation needs anyway)."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    flag = _FLAGS.get(device)
    if flag is None:
        if _capturing(device):
            raise RuntimeError(
                "portq_kernels: the index flag of this device is made on the first call, and a "
                "CUDA graph is being captured; call the op once before capturing"
            )
        flag = _FLAGS[device] = torch.ones(1, dtype=torch.int32, device=device)
    return flag


def reset_index_flag(device) -> None:
    """Mark every index as in range again (after a recorded violation)."""
    index_flag(device).fill_(1)


def debug_reads(op: str, device: torch.device) -> bool:
    """Whether this call reads index values back (debug mode); refuses capture."""
    if index_mode() != "debug":
        return False
    if _capturing(device):
        raise RuntimeError(
            f"{op}: index debug mode (PORTQ_KERNELS_DEBUG or index_checks('debug')) reads index "
            "values back to the host, which CUDA graph capture forbids; capture with it off"
        )
    return True


def trap_in_kernel(device: torch.device) -> bool:
    """The kernels' ``TRAP`` constexpr: stop on a bad index (compiled CUDA, not record mode)."""
    interpreting = os.environ.get("TRITON_INTERPRET", "0").lower() not in ("", "0", "false")
    return device.type == "cuda" and not interpreting and index_mode() != "record"


def after_launch(op: str, flag: torch.Tensor, what: str) -> None:
    """Apply the mode to the flag the kernel just wrote: nothing in record mode
    or on CUDA (the kernel trapped), an immediate ``ValueError`` on the CPU."""
    if index_mode() == "record" or flag.device.type != "cpu":
        return
    if int(flag[0]) == 0:
        flag.fill_(1)
        raise ValueError(
            f"{op}: {what} must index inside their tensors, got an out-of-range value (masked: "
            "nothing was read or written outside the tensors); set PORTQ_KERNELS_DEBUG=1 to name it"
        )


def first_outside(name: str, values: torch.Tensor, low: int | None, high: int | None, what: str = "") -> None:
    """Debug mode: raise naming the first entry of ``values`` outside ``[low, high)``."""
    values = values.detach().reshape(-1).cpu().to(torch.int64)
    bad = torch.zeros_like(values, dtype=torch.bool)
    if low is not None:
        bad |= values < low
    if high is not None:
        bad |= values >= high
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        bounds = [f">= {low}" if low is not None else "", f"< {high}{what}" if high is not None else ""]
        fail(f"{name}[{first}]", " and ".join(b for b in bounds if b), int(values[first]))


@triton.jit
def _trap_if(bad):
    """Stop the kernel (PTX ``trap``) when the int32 scalar ``bad`` is non-zero."""
    tl.inline_asm_elementwise(
        "{ .reg .pred p; setp.ne.s32 p, $1, 0; @p trap; mov.u32 $0, 0; }",
        "=r,r", [tl.zeros([1], tl.int32) + bad], dtype=tl.int32, is_pure=False, pack=1,
    )


@triton.jit
def record_scalar_violation(flag, bad, TRAP: tl.constexpr):
    """Clear ``flag`` when the scalar condition ``bad`` holds; with ``TRAP``
    (CUDA, index mode assert or debug) then stop the kernel."""
    tl.store(flag, 0, mask=bad)
    if TRAP:
        _trap_if(bad.to(tl.int32))


@triton.jit
def record_violation(flag, bad, TRAP: tl.constexpr):
    """:func:`record_scalar_violation` for any lane of the 1-D ``bad``."""
    record_scalar_violation(flag, tl.max(bad.to(tl.int32), 0) > 0, TRAP)
