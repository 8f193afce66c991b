"""Out-of-range index values on every KV-cache op, with sentinel-guarded buffers.

Every tensor an op reads or writes is a view into a larger buffer whose margins
hold a sentinel, and the margins are at least one cache block (or one table
row) wide, so a read or write one block/slot/column outside its tensor lands
in them: a wild write changes a margin, a wild read copies margin data (or the
guarded block table's margin, which holds the valid block id 0) into rows that
must stay untouched. Three index modes (``portq_kernels.validation``): the
default raises on the CPU right after the launch (on CUDA the kernel traps:
see the subprocess test), ``record`` only clears the flag, ``debug``
names the first bad entry before launching.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from kv_cache_helpers import DEVICE, generator, random_fp8_bytes
from test_kv_cache_upconvert import random_entries

from portq_kernels import kv_cache as ops
from portq_kernels import validation
from portq_kernels.kv_cache import reference as ref

BLOCK, NUM_BLOCKS, ROWS = 16, 4, 10
GUARD_BYTE = 0xEE
POISON_BYTE = 0xA5


class Guarded:
    """A tensor inside a buffer with ``margin`` sentinel elements on each side."""

    def __init__(self, data: torch.Tensor, margin: int, sentinel):
        flat = data.reshape(-1)
        self.buffer = torch.full((flat.numel() + 2 * margin,), sentinel, dtype=data.dtype)
        self.buffer[margin : margin + flat.numel()] = flat
        self.buffer = self.buffer.to(DEVICE)
        self.margin, self.numel = margin, flat.numel()
        self.view = self.buffer[margin : margin + flat.numel()].view(data.shape)
        self.sentinel = sentinel

    def margins_intact(self) -> bool:
        buffer = self.buffer.cpu()
        return bool((buffer[: self.margin] == self.sentinel).all()
                    and (buffer[self.margin + self.numel :] == self.sentinel).all())


def _source(op_name, gen):
    if op_name in ("fp8_ds_mla", "nvfp4_ds_mla"):
        return random_entries(op_name, (NUM_BLOCKS, BLOCK), gen)
    # Cache bytes below 0x80 only: a copied margin byte (0xEE) cannot hide among them.
    return random_fp8_bytes((NUM_BLOCKS, BLOCK, 576), gen=gen) & 0x7F


def _call(op_name, src, dst, table, seq_starts, batch, module=ops, offsets=(0, ROWS, 2 * ROWS)):
    """Run ``op_name`` (the port, or ``module=ref``) with request r writing rows
    ``[offsets[r], offsets[r + 1])`` (by default [10 r, 10 r + 10)); the upconvert
    gathers take the first ``batch`` offsets as ``workspace_starts``."""
    starts = torch.tensor(list(offsets)[: batch + 1], dtype=torch.int32, device=src.device)
    if op_name == "cp_gather_cache":
        module.cp_gather_cache(src, dst, table, starts, batch, seq_starts)
    elif op_name == "gather_and_maybe_dequant_cache":
        scale = torch.tensor([0.5], device=src.device)
        module.gather_and_maybe_dequant_cache(src, dst, table, starts, dst.shape[0], "fp8", scale, seq_starts)
    else:
        kind = "fp8" if op_name == "fp8_ds_mla" else "nvfp4"
        getattr(module, f"cp_gather_and_upconvert_{kind}_kv_cache")(src, dst, table, starts[:batch], batch, seq_starts)


def _dst_dtype(op_name):
    return torch.uint8 if op_name == "cp_gather_cache" else torch.bfloat16


OPS = ["cp_gather_cache", "gather_and_maybe_dequant_cache", "fp8_ds_mla", "nvfp4_ds_mla"]
# (name, block table rows, seq_starts, debug-mode message): request 1 is the bad one.
CASES = {
    "negative-seq-start": ([[0, 1], [2, 3]], [0, -3], r"seq_starts\[1\] must be >= 0, got -3"),
    "block-past-cache": ([[0, 1], [NUM_BLOCKS, 3]], [0, 2], r"block_table\[1, 0:\]\[0\] must be >= 0 and < 4"),
    "negative-block": ([[0, 1], [-1, 3]], [0, 2], r"block_table\[1, 0:\]\[0\] must be >= 0"),
    "past-table-width": ([[0], [2]], [0, 16], r"block_table\[1\] must be 2 columns wide"),
}


def _run_case(op_name, case):
    gen = generator(7)
    rows, starts, _ = CASES[case]
    src_data = _source(op_name, gen)
    entry = src_data.shape[2]
    src = Guarded(src_data.view(torch.uint8), BLOCK * entry, GUARD_BYTE)
    table = Guarded(torch.tensor(rows, dtype=torch.int32), len(rows[0]) + 2, 0)
    dst_dtype = _dst_dtype(op_name)
    dst_bytes = torch.full((2 * ROWS, 576 * (1 if dst_dtype == torch.uint8 else 2)), POISON_BYTE, dtype=torch.uint8)
    dst = Guarded(dst_bytes, 576 * 2, GUARD_BYTE)
    seq_starts = torch.tensor(starts, dtype=torch.int32, device=DEVICE)
    return src, table, dst, seq_starts, dst_dtype


def _good_rows(op_name, src, table, seq_starts, dst_dtype):
    """The reference's rows for request 0 alone (the good one)."""
    expected = torch.full((ROWS, 576), 0, dtype=dst_dtype)
    _call(op_name, src.view.cpu(), expected, table.view.cpu()[:1], seq_starts.cpu()[:1], 1, module=ref)
    return expected


#: The gathers whose upstream skips a logical block past the table's width
#: (#49427's guard); the others read past the table row upstream, so here it is
#: an index violation.
SKIPS_PAST_TABLE = {"gather_and_maybe_dequant_cache"}


def _violations(op_name):
    return [(op_name, case) for case in sorted(CASES)
            if not (case == "past-table-width" and op_name in SKIPS_PAST_TABLE)]


@pytest.mark.parametrize(("op_name", "case"), [pair for op in OPS for pair in _violations(op)])
def test_record_mode_masks_and_flags(op_name, case):
    src, table, dst, seq_starts, dst_dtype = _run_case(op_name, case)
    inputs_before = [t.clone() for t in (src.buffer, table.buffer, seq_starts)]
    validation.reset_index_flag(DEVICE)
    with validation.index_checks("record"):
        _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2)
    assert int(validation.index_flag(DEVICE)[0]) == 0, "the violation was not recorded"
    for before, after in zip(inputs_before, (src.buffer, table.buffer, seq_starts)):
        assert torch.equal(before, after), "an input was modified"
    validation.reset_index_flag(DEVICE)
    assert src.margins_intact() and table.margins_intact() and dst.margins_intact()
    written = dst.view.cpu()
    assert (written[ROWS:] == POISON_BYTE).all(), "the bad request's rows were written"
    assert torch.equal(written[:ROWS].view(dst_dtype), _good_rows(op_name, src, table, seq_starts, dst_dtype))


@pytest.mark.parametrize(("op_name", "case"), [pair for op in OPS for pair in _violations(op)])
def test_debug_mode_names_the_first_bad_entry_before_launching(op_name, case):
    src, table, dst, seq_starts, dst_dtype = _run_case(op_name, case)
    with validation.index_checks("debug"), pytest.raises(ValueError, match=CASES[case][2]):
        _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2)
    assert (dst.view.cpu() == POISON_BYTE).all(), "debug mode launched before raising"
    assert int(validation.index_flag(DEVICE)[0]) == 1


@pytest.mark.skipif(DEVICE.type != "cpu", reason="on CUDA the default traps in the kernel (subprocess test)")
@pytest.mark.parametrize("op_name", OPS)
def test_default_mode_raises_after_the_launch_on_the_cpu(op_name):
    src, table, dst, seq_starts, dst_dtype = _run_case(op_name, "block-past-cache")
    with pytest.raises(ValueError, match="must index inside their tensors"):
        _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2)
    assert int(validation.index_flag(DEVICE)[0]) == 1, "the flag was not reset after raising"
    assert dst.margins_intact() and (dst.view.cpu()[ROWS:] == POISON_BYTE).all()


@pytest.mark.parametrize("mode", ["assert", "debug", "record"])
@pytest.mark.parametrize("op_name", sorted(SKIPS_PAST_TABLE))
def test_blocks_past_the_table_width_are_skipped_like_upstream(op_name, mode):
    """Upstream #49427: positions whose logical block is at or past the table's
    width are skipped, their rows untouched, with no error in any mode; the
    in-range part of the same request is still gathered."""
    src, table, dst, _, dst_dtype = _run_case(op_name, "past-table-width")
    seq_starts = torch.tensor([0, BLOCK - 3], dtype=torch.int32, device=DEVICE)  # rows 3..9 of request 1 skip
    validation.reset_index_flag(DEVICE)
    with validation.index_checks(mode):
        _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2)
    assert int(validation.index_flag(DEVICE)[0]) == 1, "a skipped block was reported as a violation"
    assert src.margins_intact() and table.margins_intact() and dst.margins_intact()
    written = dst.view.cpu().view(dst_dtype)
    expected = torch.zeros(2 * ROWS, 576, dtype=dst_dtype)
    _call(op_name, src.view.cpu(), expected, table.view.cpu(), seq_starts.cpu(), 2, module=ref)
    assert torch.equal(written[: ROWS + 3], expected[: ROWS + 3])
    assert (dst.view.cpu()[ROWS + 3 :] == POISON_BYTE).all(), "rows past the table's width were written"


# (offsets, debug-mode message): request 0's offsets are inconsistent, request 1 is good.
OFFSET_CASES = {
    "negative-start": ((-3, ROWS, 2 * ROWS), r"(cu_seq_lens|workspace_starts)\[0\] must be >= 0, got -3"),
    "decreasing": ((ROWS + 2, ROWS, 2 * ROWS),
                   r"(cu_seq_lens|workspace_starts)\[1\] must be non-decreasing \(>= \w+\[0\] = 12\), got 10"),
}


@pytest.mark.parametrize("case", sorted(OFFSET_CASES))
@pytest.mark.parametrize("op_name", OPS)
def test_inconsistent_offsets_are_violations(op_name, case):
    """A negative output start (upstream writes before ``dst``) or a decreasing
    offset (overlapping ranges, more pages than the grid has programs) is an
    index violation in every mode: record clears the flag and leaves that
    request's rows untouched, debug names the entry before launching, and the
    default raises on the CPU; the good request is gathered as the reference does."""
    offsets, message = OFFSET_CASES[case]
    src, table, dst, _, dst_dtype = _run_case(op_name, "negative-seq-start")
    seq_starts = torch.tensor([0, 2], dtype=torch.int32, device=DEVICE)
    validation.reset_index_flag(DEVICE)
    with validation.index_checks("record"):
        _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2, offsets=offsets)
    assert int(validation.index_flag(DEVICE)[0]) == 0, "the inconsistent offsets were not recorded"
    validation.reset_index_flag(DEVICE)
    assert src.margins_intact() and table.margins_intact() and dst.margins_intact()
    expected = torch.full((2 * ROWS, 576), 0, dtype=dst_dtype)
    _call(op_name, src.view.cpu(), expected, table.view.cpu()[1:], seq_starts.cpu()[1:], 1, module=ref,
          offsets=(ROWS, 2 * ROWS))
    written = dst.view.cpu()
    assert torch.equal(written[ROWS:].view(dst_dtype), expected[ROWS:])
    assert (written[:ROWS] == POISON_BYTE).all(), "the inconsistent request's rows were written"
    with validation.index_checks("debug"), pytest.raises(ValueError, match=message):
        _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2, offsets=offsets)
    if DEVICE.type == "cpu":
        with pytest.raises(ValueError, match="must index inside their tensors"):
            _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2, offsets=offsets)
        assert int(validation.index_flag(DEVICE)[0]) == 1


@pytest.mark.parametrize("op_name", OPS)
def test_offsets_past_the_destination_are_clamped_like_upstream(op_name):
    """Upstream clamps every output offset to the destination's rows
    (``num_tokens`` / ``dst.shape[0]``): a range running past them is cut,
    with no error, and the rows before the end are written."""
    src, table, dst, seq_starts, dst_dtype = _run_case(op_name, "negative-seq-start")
    seq_starts = torch.tensor([0, 2], dtype=torch.int32, device=DEVICE)
    offsets = (0, ROWS, 3 * ROWS) if op_name in ("cp_gather_cache", "gather_and_maybe_dequant_cache") else (0, 3 * ROWS)
    validation.reset_index_flag(DEVICE)
    _call(op_name, src.view, dst.view.view(dst_dtype), table.view, seq_starts, 2, offsets=offsets)
    assert int(validation.index_flag(DEVICE)[0]) == 1
    assert dst.margins_intact()
    expected = torch.full((2 * ROWS, 576), 0, dtype=dst_dtype)
    _call(op_name, src.view.cpu(), expected, table.view.cpu(), seq_starts.cpu(), 2, module=ref, offsets=offsets)
    assert torch.equal(dst.view.cpu().view(dst_dtype), expected)


def _concat_case(slots):
    kv_c = torch.randn(len(slots), 512, generator=generator(3)).bfloat16()
    k_pe = torch.randn(len(slots), 64, generator=generator(4)).bfloat16()
    cache = Guarded(torch.zeros(NUM_BLOCKS, BLOCK, 576, dtype=torch.bfloat16), BLOCK * 576, -99.0)
    slot_mapping = torch.tensor(slots, device=DEVICE)
    return kv_c.to(DEVICE), k_pe.to(DEVICE), cache, slot_mapping


def test_concat_slots_past_the_cache_are_masked_flagged_and_named():
    slots = [0, 1, -1, NUM_BLOCKS * BLOCK, 5, NUM_BLOCKS * BLOCK + 3]
    kv_c, k_pe, cache, slot_mapping = _concat_case(slots)
    scale = torch.ones(1, device=DEVICE)
    with validation.index_checks("debug"), pytest.raises(ValueError, match=r"slot_mapping\[3\] must be < 64"):
        ops.concat_and_cache_mla(kv_c, k_pe, cache.view, slot_mapping, "auto", scale)
    assert not cache.view.any()
    validation.reset_index_flag(DEVICE)
    with validation.index_checks("record"):
        ops.concat_and_cache_mla(kv_c, k_pe, cache.view, slot_mapping, "auto", scale)
    assert int(validation.index_flag(DEVICE)[0]) == 0
    validation.reset_index_flag(DEVICE)
    assert cache.margins_intact()
    flat = cache.view.view(-1, 576).cpu()
    expected = torch.cat([kv_c, k_pe], 1).cpu()
    assert torch.equal(flat[[0, 1, 5]], expected[[0, 1, 4]])
    assert not flat[[i for i in range(NUM_BLOCKS * BLOCK) if i not in (0, 1, 5)]].any()
    if DEVICE.type == "cpu":
        with pytest.raises(ValueError, match="slot_mapping entries must index inside"):
            ops.concat_and_cache_mla(kv_c, k_pe, cache.view, slot_mapping, "auto", scale)


_WRITER_ENTRY = {"auto": (576, torch.bfloat16), "fp8": (576, torch.uint8),
                 "fp8_ds_mla": (656, torch.uint8), "nvfp4_ds_mla": (352, torch.uint8)}


@pytest.mark.parametrize("kv_cache_dtype", list(_WRITER_ENTRY))
def test_every_writer_masks_and_flags_slots_past_the_cache(kv_cache_dtype):
    """Slots just past the cache, past 2^31, and 2^32 + 3 (which a 32-bit slot
    would wrap to the valid slot 3): none is written anywhere, each clears the
    flag, and the valid tokens around them are written as the reference writes them."""
    num_slots = NUM_BLOCKS * BLOCK
    slots = [num_slots - 1, num_slots, 2, -1, 2**31 + 1, 7, 2**32 + 3, num_slots + BLOCK, 0]
    good = [0, 2, 5, 8]
    entry, cache_dtype = _WRITER_ENTRY[kv_cache_dtype]
    kv_c, k_pe, _, slot_mapping = _concat_case(slots)
    sentinel = -99.0 if cache_dtype == torch.bfloat16 else GUARD_BYTE
    cache = Guarded(torch.zeros(NUM_BLOCKS, BLOCK, entry, dtype=cache_dtype), BLOCK * entry, sentinel)
    scale = torch.full((1,), 0.5, device=DEVICE)
    validation.reset_index_flag(DEVICE)
    with validation.index_checks("record"):
        ops.concat_and_cache_mla(kv_c, k_pe, cache.view, slot_mapping, kv_cache_dtype, scale)
    assert int(validation.index_flag(DEVICE)[0]) == 0
    validation.reset_index_flag(DEVICE)
    assert cache.margins_intact()
    expected = torch.zeros(NUM_BLOCKS, BLOCK, entry, dtype=cache_dtype)
    ref.concat_and_cache_mla(kv_c.cpu()[good], k_pe.cpu()[good], expected,
                             torch.tensor([slots[t] for t in good]), kv_cache_dtype, scale.cpu())
    assert torch.equal(cache.view.cpu().view(torch.uint8), expected.view(torch.uint8))
    if DEVICE.type == "cpu":
        with pytest.raises(ValueError, match="slot_mapping entries must index inside"):
            ops.concat_and_cache_mla(kv_c, k_pe, cache.view, slot_mapping, kv_cache_dtype, scale)
        assert int(validation.index_flag(DEVICE)[0]) == 1


def test_padding_slots_are_not_violations():
    kv_c, k_pe, cache, slot_mapping = _concat_case([-1, 3, -1])
    ops.concat_and_cache_mla(kv_c, k_pe, cache.view, slot_mapping, "auto", torch.ones(1, device=DEVICE))
    assert int(validation.index_flag(DEVICE)[0]) == 1


_ASSERT_SCRIPT = """
import torch
from portq_kernels import kv_cache as ops
src = torch.zeros(4, 16, 576, dtype=torch.uint8, device="cuda")
dst = torch.zeros(20, 576, dtype=torch.uint8, device="cuda")
table = torch.tensor([[0, 1], [9, 3]], dtype=torch.int32, device="cuda")
cu = torch.tensor([0, 10, 20], dtype=torch.int32, device="cuda")
ops.cp_gather_cache(src, dst, table, cu, 2)
print("launched without a host read", flush=True)
torch.cuda.synchronize()
print("no assertion")
"""


@pytest.mark.gpu
def test_default_mode_stops_the_kernel_on_cuda():
    """The default wrapper returns without a host read, and the stream's next
    synchronisation fails (a subprocess: a trapped kernel ends the CUDA context)."""
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "tests"), env_path(root)]))
    env.pop("PORTQ_KERNELS_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", "import conftest\n" + _ASSERT_SCRIPT], cwd=root / "tests",
                          env=env, capture_output=True, text=True, timeout=300)
    assert "launched without a host read" in done.stdout, done.stderr[-2000:]
    assert done.returncode != 0 and "no assertion" not in done.stdout
    assert "CUDA error" in done.stderr, done.stderr[-2000:]


def env_path(root: Path) -> str:
    return os.pathsep.join(p for p in [str(root), os.environ.get("PYTHONPATH", "")] if p)


def test_hisparse_host_cache_arguments_are_not_carried():
    """Deviation of cp_gather_and_upconvert_fp8_kv_cache: upstream's newest
    signature adds host-cache arguments; they are refused, not ignored."""
    src, table, dst, seq_starts, _ = _run_case("fp8_ds_mla", "negative-seq-start")
    with pytest.raises(TypeError, match="host_cache"):
        ops.cp_gather_and_upconvert_fp8_kv_cache(src.view, dst.view.view(torch.bfloat16), table.view,
                                                 seq_starts, 2, None, host_cache=None)
