"""Benchmark of the KV-cache ops (GPU): ours vs the PyTorch path vs the copy limit.

Scenarios are upstream's #51739 benchmark (``benchmark_cp_gather.py``): block 64,
entry 576, requests of 60K-300K tokens (single-60k, single-300k, skew-2/4/8),
every request starting at a non-aligned position ``13 + (17 r) % 64``, block
tables a random permutation of the blocks in use. For each op: time per launch
(``_timing.time_gpu``: CUDA-graph replay of many launches, L2 flushed between
trials, median of 7 trials with the fastest and slowest), effective bandwidth
(bytes each op must read + write), percent of the device copy bandwidth
measured in the same run, the default wrapper (a bad index stops the kernel
with a ``trap``) against the unchecked kernel (index mode ``record``: the
same kernel compiled without the trap), and the speed-up over the
PyTorch path a user would write (index computation + advanced indexing +
``.to()``).

Seed 000 asks for the page-task vs per-token comparison to be measured, not
quoted: :func:`per_token_gather_kernel` below is the pre-#51739 design (one
program per output token, request found through a host-built ``token_to_seq``
back-map); it lives here only and is timed beside the page-task gather.

Run: ``python benchmarks/bench_kv_cache.py`` (writes reports/benchmarks/kv_cache.{md,png}).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

import _bootstrap  # noqa: F401
import torch
import triton
import triton.language as tl
from _timing import Ratio, Timing, time_gpu, time_ratio

from portq_kernels import kv_cache as ops
from portq_kernels import validation
from portq_kernels.kv_cache import _page_task
from portq_kernels.kv_cache._numerics import bf16_bits_to_fp32, divide_rn, fp32_to_fp8_code

# The module, not the op of the same name that the package re-exports.
concat_module = importlib.import_module("portq_kernels.kv_cache.concat_and_cache_mla")

SCENARIOS = {
    "single-60k": [60000],
    "single-300k": [300000],
    "skew-2": [60000, 300000],
    "skew-4": [60000, 100000, 180000, 300000],
    "skew-8": [60000, 60000, 80000, 100000, 140000, 180000, 240000, 300000],
}
COMMAND = "python benchmarks/bench_kv_cache.py"
DEVICE = "cuda"
#: ``--profile``: every op runs once per scenario and nothing is timed, so that a
#: profiler (``ncu``) sees one launch of each kernel.
PROFILE = False


@triton.jit
def per_token_gather_kernel(
    src_cache, dst, block_table, cu_seq_lens, token_to_seq, seq_starts, scale,
    block_size, block_table_stride, cache_block_stride, cache_entry_stride, dst_entry_stride,
    ENTRY_SIZE: tl.constexpr, ENTRY_BLOCK: tl.constexpr,
):
    """Pre-#51739 gather_and_maybe_dequant_cache (fp8 -> bf16): one program per
    output token; the request comes from the back-map, the block table is read
    once per token. Benchmark-only."""
    token = tl.program_id(0)
    req = tl.load(token_to_seq + token)
    begin = tl.load(cu_seq_lens + req)
    end = tl.load(cu_seq_lens + req + 1)
    position = token - begin + tl.load(seq_starts + req)
    block = tl.load(block_table + req.to(tl.int64) * block_table_stride + position // block_size)
    cols = tl.arange(0, ENTRY_BLOCK)
    mask = cols < tl.where(token < end, ENTRY_SIZE, 0)
    src = src_cache + block.to(tl.int64) * cache_block_stride + (position % block_size).to(tl.int64) * cache_entry_stride
    codes = tl.load(src + cols, mask=mask, other=0)
    values = codes.to(tl.float8e4nv, bitcast=True).to(tl.float32) * tl.load(scale)
    tl.store(dst + token.to(tl.int64) * dst_entry_stride + cols, values.to(tl.bfloat16), mask=mask)


@triton.jit
def flat_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    """A plain copy of ``n`` int32 words: the ceiling for one launch that moves a
    given number of bytes (benchmark-only)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def ds_mla_writer_variant(kv_c, k_pe, kv_cache, kv_cache_as_fp32, kv_cache_as_16bit, slot_mapping,
                          block_stride, entry_stride, kv_c_stride, k_pe_stride, num_tokens,
                          TOKENS: tl.constexpr, AMAX: tl.constexpr, RECIPROCAL: tl.constexpr):
    """The fp8_ds_mla writer's stages with one left out or done the old way
    (benchmark-only, slots assumed valid): ``AMAX`` False takes a constant tile
    scale instead of the per-tile max (wrong bytes, timed only); ``RECIPROCAL``
    False divides every element with ``div_rn`` (the previous writer)."""
    rows = tl.program_id(0) * TOKENS * 4 + tl.arange(0, TOKENS * 4)
    tokens = tl.program_id(0) * TOKENS + tl.arange(0, TOKENS)
    row_ok = rows // 4 < num_tokens
    token_ok = tokens < num_tokens
    row_slot = tl.load(slot_mapping + rows // 4, mask=row_ok, other=0)
    token_slot = tl.load(slot_mapping + tokens, mask=token_ok, other=0)
    row_entry = (row_slot // 64) * block_stride + (row_slot % 64) * entry_stride
    token_entry = (token_slot // 64) * block_stride + (token_slot % 64) * entry_stride
    cols = tl.arange(0, 128)
    x = bf16_bits_to_fp32(tl.load(kv_c + (rows // 4).to(tl.int64)[:, None] * kv_c_stride + (rows % 4)[:, None] * 128
                                  + cols[None, :], mask=row_ok[:, None], other=0))
    if AMAX:
        amax = tl.max(tl.abs(x), axis=1)
    else:
        amax = tl.full([TOKENS * 4], 3.0, tl.float32)
    tile_scale = tl.maximum(tl.math.div_rn(amax, 448.0), 1.1754943508222875e-38)
    if RECIPROCAL:
        reciprocal = tl.math.div_rn(tl.full([TOKENS * 4], 1.0, tl.float32), tile_scale)
        quotient = divide_rn(x, tile_scale[:, None], reciprocal[:, None], True, True)
    else:
        quotient = tl.math.div_rn(x, tile_scale[:, None])
    codes = fp32_to_fp8_code(quotient, False, True)
    tl.store(kv_cache + row_entry[:, None] + (rows % 4)[:, None] * 128 + cols[None, :], codes.to(tl.uint8),
             mask=row_ok[:, None])
    tl.store(kv_cache_as_fp32 + (row_entry >> 2) + 128 + rows % 4, tile_scale, mask=row_ok)
    rope_cols = tl.arange(0, 64)
    rope = tl.load(k_pe + tokens.to(tl.int64)[:, None] * k_pe_stride + rope_cols[None, :], mask=token_ok[:, None])
    tl.store(kv_cache_as_16bit + (token_entry >> 1)[:, None] + 264 + rope_cols[None, :], rope, mask=token_ok[:, None])


#: What Nsight Compute showed for the ops that stay short (one launch each, profiled once on the
#: H200 with the command below; not re-measured by this script, which times only).
PROFILE_NOTE = """\
## What limits the ops that stay short

Profiled once on the H200 (one launch of each op per scenario; `ncu --clock-control none --section \
SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section \
WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis python \
benchmarks/bench_kv_cache.py --profile --scenarios single-60k single-300k`; ncu flushes the caches \
before each launch, so its durations are single cold launches):

- **Gathers at 60K tokens.** 940 page programs of 8 warps: one wave (7.1 programs per SM, at most 8 \
fit), so nothing overlaps the start-up (table lookups before the first byte moves) or the drain. \
DRAM throughput 50-57% of peak over the launch; the warps wait on memory (dequant: 20.7 of 41 cycles \
per issued instruction on the L1TEX scoreboard; issue slots busy 13-28%). The fp8 upconvert holds 80 \
registers (3 programs per SM, 34% occupancy) and the nvfp4 upconvert 62 (4 per SM, 42%; issue slots \
44% busy: its e2m1 decode). The "copy, same bytes" column is the same measurement for a plain copy \
kernel: at 60K it reaches 87-89% of the 2 GiB copy bandwidth itself, so part of each op's shortfall \
at 60K is what any launch of that size pays, the rest (the "% of that" column) is the op's own \
prologue and lower occupancy. Other tilings (4-16 warps, 8-64 tokens per step) moved the nvfp4 \
upconvert's unchecked kernel to 28.5 us, but its default (trapping) kernel to 33.8 us, 1.19x, so \
the tiling is unchanged.
- **Writers (300K tokens).** Instruction-bound, not memory-bound: SM throughput 68% (bf16->fp8), 71% \
(fp8_ds_mla), 85% (nvfp4_ds_mla) against DRAM throughput 63%, 46%, 32% (profiled before the slot \
fix below). The IEEE division of every element (`div_rn`) was the largest part: through the \
reciprocal with a fused remainder correction (`_numerics.divide_rn`, bit-identical) bf16->fp8 went \
from 171 to 154-162 us and fp8_ds_mla from 241 to 216-231 us; nvfp4_ds_mla from 339 to 294 us with a \
comparison-based e2m1 encoder. The next part was the slot path: each slot was divided by the runtime \
block size in 64-bit arithmetic, for the token and again for each of its tile rows, and the trap \
made the default 5-7% slower than the unchecked kernel. Each token's destination is now computed \
once, with the block size a compile-time constant (a shift for a power of two) and 32-bit division \
where every slot fits (`_token_entries`; sm_90 code checked for no 64-bit division in \
`test_kv_cache_writer_codegen.py`): bf16->fp8 149 us (was 154-162), fp8_ds_mla 185 us (was \
216-231), nvfp4_ds_mla 258 us (was 294) at 300K, and every writer's default within 1% of its \
unchecked kernel. What remains in fp8_ds_mla is the table above: the tile amax reduction (10 us of \
173 in the benchmark copy at 300K) and the per-tile scale division and fp8 rounding of every element \
(the copy with a constant scale still runs at 79% of copy bandwidth). nvfp4_ds_mla stays \
instruction-bound on its integer fp8 conversions of the tile scales (the hardware conversion wrote \
wrong scale bytes on Triton 3.6), the per-tile division and the e2m1 encoding of every element. \
Its 64 RoPE elements per token were converted the same integer way; compiled, they now take the \
hardware conversion (bit for bit equal to the reference in the GPU tests): 259 -> 239 us at 300K on \
an H100 (57% -> 62% of copy bandwidth). The writers' tilings (`--sweep`, tokens per program x warps, \
4x4 to 32x8) put fp8_ds_mla at 8 tokens per program (230 us against 235 with 4 at 300K; 16 and 32 \
are slower) and nvfp4_ds_mla at 8 (4 is level, 16 and 32 slower).
"""


def writer_limiters(args, copy_tbs):
    """The fp8_ds_mla writer against itself with the tile amax left out and with
    the previous per-element ``div_rn``, at 60K and 300K tokens (printed, and a
    section of the report)."""
    lines = []
    for total in (60000, 300000):
        num_blocks = -(-total // 64)
        kv_c = torch.randn(total, 512).bfloat16().to(DEVICE)
        k_pe = torch.randn(total, 64).bfloat16().to(DEVICE)
        slots = torch.randperm(num_blocks * 64)[:total].to(DEVICE)
        ds = torch.empty(num_blocks, 64, 656, dtype=torch.uint8, device=DEVICE)
        unit = torch.tensor([1.0], device=DEVICE)
        nbytes = total * (2 * 576 + 656 + 8)
        tokens = concat_module.WRITER_TILING["fp8_ds_mla"][0]
        grid = (triton.cdiv(total, tokens),)
        variants = [("the op (tile amax, division through the reciprocal)",
                     lambda: ops.concat_and_cache_mla(kv_c, k_pe, ds, slots, "fp8_ds_mla", unit))]
        for label, amax, reciprocal in (("same stages, benchmark copy", True, True),
                                        ("tile amax left out (constant scale)", False, True),
                                        ("per-element div_rn (previous writer)", True, False)):
            variants.append((label, lambda amax=amax, reciprocal=reciprocal: ds_mla_writer_variant[grid](
                kv_c.view(torch.int16), k_pe.view(torch.int16), ds, ds.view(torch.float32), ds.view(torch.int16),
                slots, ds.stride(0), ds.stride(1), kv_c.stride(0), k_pe.stride(0), total,
                TOKENS=tokens, AMAX=amax, RECIPROCAL=reciprocal, num_warps=4)))
        for label, fn in variants:
            t = bench(fn, args)
            tbs = nbytes / t.ms / 1e9
            lines.append(f"| {total} | {label} | {t.us:.1f} | {t.spread()} | {100 * tbs / copy_tbs:.0f}% |")
            print(f"limiters: {total} {label}: {t.us:.1f} us {100 * tbs / copy_tbs:.0f}%", flush=True)
        del kv_c, k_pe, ds
    return lines


_SAME_BYTES_COPY = {}


def same_bytes_copy_us(nbytes, args):
    """Time of a plain copy kernel moving ``nbytes`` (half read, half written),
    timed like the ops: what a launch of this size reaches at best."""
    if nbytes not in _SAME_BYTES_COPY:
        words = max(nbytes // 8, 1)
        # From the CPU: the CUDA generator refuses to advance once graphs were captured.
        src = torch.randint(0, 1 << 30, (words,), dtype=torch.int32).to(DEVICE)
        dst = torch.empty_like(src)
        _SAME_BYTES_COPY[nbytes] = bench(
            lambda: flat_copy_kernel[(triton.cdiv(words, 4096),)](src, dst, words, BLOCK=4096, num_warps=8), args).us
        del src, dst
    return _SAME_BYTES_COPY[nbytes]


def build_token_to_seq(cu_seq_lens, num_tokens):
    """What the pre-fix caller built on every chunk: request id per output row."""
    lens = cu_seq_lens[1:] - cu_seq_lens[:-1]
    reqs = torch.arange(lens.shape[0], device=lens.device, dtype=torch.int32)
    return torch.repeat_interleave(reqs, lens, output_size=num_tokens)


def per_token_gather(src, dst, table, cu, token_to_seq, starts, scale):
    per_token_gather_kernel[(dst.shape[0],)](
        src, dst, table, cu, token_to_seq, starts, scale,
        src.shape[1], table.stride(0), src.stride(0), src.stride(1), dst.stride(0),
        ENTRY_SIZE=dst.shape[1], ENTRY_BLOCK=triton.next_power_of_2(dst.shape[1]), num_warps=2,
    )


# --- the PyTorch path a user would write ------------------------------------------------
def torch_rows(table, starts_of_rows, seq_starts, num_rows, block_size):
    """Physical (block, offset) of every output row: repeat_interleave + indexing."""
    lens = torch.diff(starts_of_rows, append=starts_of_rows.new_tensor([num_rows]))
    req = torch.repeat_interleave(torch.arange(lens.shape[0], device=table.device), lens)
    pos = torch.arange(num_rows, device=table.device) - starts_of_rows[req] + seq_starts[req]
    return table[req, pos // block_size].long(), pos % block_size


def torch_gather_dequant(src, dst, table, ws, seq_starts, scale):
    blocks, offsets = torch_rows(table, ws, seq_starts, dst.shape[0], src.shape[1])
    dst.copy_((src[blocks, offsets].view(torch.float8_e4m3fn).float() * scale).to(dst.dtype))


def torch_cp_gather(src, dst, table, ws, seq_starts):
    blocks, offsets = torch_rows(table, ws, seq_starts, dst.shape[0], src.shape[1])
    dst.copy_(src[blocks, offsets])


def torch_upconvert_fp8(src, dst, table, ws, seq_starts):
    blocks, offsets = torch_rows(table, ws, seq_starts, dst.shape[0], src.shape[1])
    rows = src[blocks, offsets]
    scales = rows[:, 512:528].contiguous().view(torch.float32).repeat_interleave(128, dim=1)
    dst[:, :512] = (rows[:, :512].view(torch.float8_e4m3fn).float() * scales).to(torch.bfloat16)
    dst[:, 512:] = rows[:, 528:].contiguous().view(torch.bfloat16)


E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def torch_upconvert_nvfp4(src, dst, table, ws, seq_starts, lut):
    blocks, offsets = torch_rows(table, ws, seq_starts, dst.shape[0], src.shape[1])
    rows = src[blocks, offsets]
    packed = rows[:, :256].long()
    values = torch.stack([lut[packed & 15], lut[packed >> 4]], dim=-1).reshape(-1, 32, 16)
    tiles = torch.arange(32, device=src.device)
    sf = rows[:, 320 + 8 * (tiles & 3) + (tiles >> 2)].view(torch.float8_e4m3fn).float()
    dst[:, :512] = (values * sf[..., None]).reshape(-1, 512).to(torch.bfloat16)
    dst[:, 512:] = rows[:, 256:320].view(torch.float8_e4m3fn).to(torch.bfloat16)


def torch_concat_fp8(kv_c, k_pe, cache, slots, scale):
    q = (torch.cat([kv_c, k_pe], dim=1).float() / scale).clamp(-448, 448).to(torch.float8_e4m3fn)
    cache.view(-1, cache.shape[-1])[slots] = q.view(torch.uint8)


# --- measurement ---------------------------------------------------------------------------
def bench(fn, args, mode="record", graph=True) -> Timing:
    """Time ``fn`` in index mode ``mode`` (``record``: the unchecked kernel;
    ``assert``: the default wrapper)."""
    def call():
        with validation.index_checks(mode):
            fn()
    if DEVICE == "cpu":  # --smoke: run once, for checking the script without a GPU
        call()
        return Timing(1.0, 1.0, 1.0, 1, "smoke")
    return time_gpu(call, trials=args.trials, graph=graph)


def checked_ratio(fn, args) -> Ratio:
    """Default wrapper (``assert``) ÷ unchecked kernel (``record``), timed
    interleaved in one loop (``_timing.time_ratio``), with its spread."""
    def in_mode(mode):
        def call():
            with validation.index_checks(mode):
                fn()
        return call
    if DEVICE == "cpu":  # --smoke
        one = Timing(1.0, 1.0, 1.0, 1, "smoke")
        return Ratio(1.0, 1.0, 1.0, one, one)
    return time_ratio(in_mode("assert"), in_mode("record"), trials=15)


def copy_bandwidth(args):
    """Device-to-device copy of 2 GiB; bytes counted read + write. An eager loop:
    captured in a CUDA graph the same copy is a memcpy node, which measured
    2.7 TB/s on the H200 against 4.2 for the eager copy."""
    size = 1 << (31 if DEVICE == "cuda" else 20)
    src = torch.randint(0, 255, (size,), dtype=torch.uint8, device=DEVICE)
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src), args, graph=False).ms
    del src, dst
    return 2 * size / ms / 1e9  # TB/s


def run_scenario(name, lens, args, copy_tbs):
    block_size, entry = args.block_size, args.entry_size
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)
    starts = [13 + (17 * r) % block_size for r in range(len(lens))]
    pages = [-(-(s + n) // block_size) for s, n in zip(starts, lens)]
    num_blocks = sum(pages)
    perm = torch.randperm(num_blocks, device=DEVICE, generator=gen).to(torch.int32)
    table = torch.zeros(len(lens), max(pages), dtype=torch.int32, device=DEVICE)
    used = 0
    for r, count in enumerate(pages):
        table[r, :count] = perm[used : used + count]
        used += count
    cu = torch.zeros(len(lens) + 1, dtype=torch.int32, device=DEVICE)
    cu[1:] = torch.tensor(lens, device=DEVICE).cumsum(0)
    ws = cu[:-1].contiguous()
    seq_starts = torch.tensor(starts, dtype=torch.int32, device=DEVICE)
    total = int(cu[-1])
    scale = torch.tensor([0.1], device=DEVICE)
    rows = []

    def record(op, ours, torch_fn, nbytes, extra=None, read_back=seq_starts):
        if PROFILE:
            with validation.index_checks("assert"):
                ours()
            if DEVICE == "cuda":
                torch.cuda.synchronize()
            print(f"  {op}: one launch", flush=True)
            return
        default = bench(ours, args, "assert")
        ratio = checked_ratio(ours, args)
        unchecked = ratio.b
        # The previous default wrapper: one host read of an index tensor per call, then the launch.
        host_read = bench(lambda: (int(read_back.min()), ours()), args, "record")
        torch_ms = bench(torch_fn, args).ms if torch_fn else float("nan")
        copy_us = same_bytes_copy_us(nbytes, args)
        tbs = nbytes / default.ms / 1e9
        row = dict(scenario=name, op=op, tokens=total, mbytes=nbytes / 1e6, ours_us=default.us,
                   spread=default.spread(), unchecked_us=unchecked.us, unchecked_spread=unchecked.spread(),
                   ratio=ratio.median, ratio_spread=ratio.spread(), method=default.method, tbs=tbs, host_read_us=host_read.us,
                   pct_copy=100 * tbs / copy_tbs, copy_us=copy_us, pct_same_bytes=100 * copy_us / default.us,
                   torch_us=torch_ms * 1e3, speedup=torch_ms / default.ms)
        row.update(extra or {})
        rows.append(row)
        print(f"  {op:40s} {row['ours_us']:9.1f} us [{row['spread']}] {tbs:6.2f} TB/s {row['pct_copy']:5.1f}% "
              f"unchecked {row['unchecked_us']:.1f} us (x{row['ratio']:.3f}) "
              f"torch {row['torch_us']:9.1f} us x{row['speedup']:.1f}", flush=True)

    fp8_cache = torch.randint(0, 0x7F, (num_blocks, block_size, entry), dtype=torch.uint8, device=DEVICE, generator=gen)
    out_bf16 = torch.empty(total, entry, dtype=torch.bfloat16, device=DEVICE)
    out_raw = torch.empty(total, entry, dtype=torch.uint8, device=DEVICE)

    record("cp_gather_cache (fp8 bytes)",
           lambda: ops.cp_gather_cache(fp8_cache, out_raw, table, cu, len(lens), seq_starts),
           lambda: torch_cp_gather(fp8_cache, out_raw, table, ws, seq_starts), 2 * total * entry)
    record("gather_and_maybe_dequant_cache (fp8->bf16)",
           lambda: ops.gather_and_maybe_dequant_cache(fp8_cache, out_bf16, table, cu, total, "fp8", scale, seq_starts),
           lambda: torch_gather_dequant(fp8_cache, out_bf16, table, ws, seq_starts, scale), 3 * total * entry)
    if not PROFILE:
        token_to_seq = build_token_to_seq(cu, total)
        per_token_ms = bench(lambda: per_token_gather(fp8_cache, out_bf16, table, cu, token_to_seq, seq_starts, scale), args).ms
        build_ms = bench(lambda: build_token_to_seq(cu, total), args).ms
        rows[-1].update(per_token_us=per_token_ms * 1e3, token_to_seq_us=build_ms * 1e3)
        check = out_bf16.clone()
        ops.gather_and_maybe_dequant_cache(fp8_cache, check, table, cu, total, "fp8", scale, seq_starts)
        if DEVICE == "cuda" and not torch.equal(check.view(torch.int16), out_bf16.view(torch.int16)):
            sys.exit("per-token variant disagrees with the page-task gather")
        del check, token_to_seq
    del fp8_cache, out_raw

    ds_cache = torch.randint(0, 0x7F, (num_blocks, block_size, 656), dtype=torch.uint8, device=DEVICE, generator=gen)
    ds_cache[..., 512:528] = torch.rand(num_blocks, block_size, 4, device=DEVICE, generator=gen).add(0.1).view(torch.uint8).view(num_blocks, block_size, 16)
    ds_cache[..., 528:] = torch.randn(num_blocks, block_size, 64, device=DEVICE, generator=gen).bfloat16().view(torch.uint8).view(num_blocks, block_size, 128)
    record("cp_gather_and_upconvert_fp8_kv_cache",
           lambda: ops.cp_gather_and_upconvert_fp8_kv_cache(ds_cache, out_bf16, table, ws, len(lens), seq_starts),
           lambda: torch_upconvert_fp8(ds_cache, out_bf16, table, ws, seq_starts), total * (656 + 2 * 576))
    del ds_cache

    nv_cache = torch.randint(0, 0x7F, (num_blocks, block_size, 352), dtype=torch.uint8, device=DEVICE, generator=gen)
    lut = torch.tensor(E2M1, device=DEVICE)
    record("cp_gather_and_upconvert_nvfp4_kv_cache",
           lambda: ops.cp_gather_and_upconvert_nvfp4_kv_cache(nv_cache, out_bf16, table, ws, len(lens), seq_starts),
           lambda: torch_upconvert_nvfp4(nv_cache, out_bf16, table, ws, seq_starts, lut), total * (352 + 2 * 576))
    del nv_cache

    kv_c = torch.randn(total, 512, device=DEVICE, generator=gen).bfloat16()
    k_pe = torch.randn(total, 64, device=DEVICE, generator=gen).bfloat16()
    slots = torch.randperm(num_blocks * block_size, device=DEVICE, generator=gen)[:total]
    cache = torch.empty(num_blocks, block_size, entry, dtype=torch.uint8, device=DEVICE)
    record("concat_and_cache_mla (bf16->fp8)",
           lambda: ops.concat_and_cache_mla(kv_c, k_pe, cache, slots, "fp8", scale),
           lambda: torch_concat_fp8(kv_c, k_pe, cache, slots, scale), total * (2 * entry + entry + 8),
           read_back=slots)
    ds = torch.empty(num_blocks, block_size, 656, dtype=torch.uint8, device=DEVICE)
    record("concat_and_cache_mla (fp8_ds_mla)",
           lambda: ops.concat_and_cache_mla(kv_c, k_pe, ds, slots, "fp8_ds_mla", scale),
           None, total * (2 * entry + 656 + 8), read_back=slots)
    nvfp4 = torch.empty(num_blocks, block_size, 352, dtype=torch.uint8, device=DEVICE)
    record("concat_and_cache_mla (nvfp4_ds_mla)",
           lambda: ops.concat_and_cache_mla(kv_c, k_pe, nvfp4, slots, "nvfp4_ds_mla", scale),
           None, total * (2 * entry + 352 + 8), read_back=slots)
    del kv_c, k_pe, cache, ds, nvfp4, out_bf16
    torch.cuda.empty_cache()
    return rows


def sweep(args, copy_tbs):
    """Dense-gather tilings (warps, chunk elements) on the fp8 -> bf16 gather; printed
    only, to choose the defaults of ``_page_task``."""
    defaults = (_page_task.GATHER_WARPS, _page_task.DENSE_CHUNK)
    print("sweep: scenario warps chunk us TB/s %copy", flush=True)
    for name in ("single-60k", "single-300k"):
        lens = SCENARIOS[name]
        total = sum(lens)
        starts = [13 + (17 * r) % 64 for r in range(len(lens))]
        pages = [-(-(s + n) // 64) for s, n in zip(starts, lens)]
        table = torch.randperm(sum(pages)).to(torch.int32).reshape(1, -1).to(DEVICE)
        cu = torch.tensor([0, total], dtype=torch.int32, device=DEVICE)
        seq = torch.tensor(starts, dtype=torch.int32, device=DEVICE)
        # Random data from the CPU: the default CUDA generator refuses to advance once
        # graphs were captured in this process ("Offset increment outside graph capture").
        src = torch.randint(0, 0x7F, (sum(pages), 64, 576), dtype=torch.uint8).to(DEVICE)
        dst = torch.empty(total, 576, dtype=torch.bfloat16, device=DEVICE)
        scale = torch.tensor([0.1], device=DEVICE)
        for warps, chunk in ((4, 2048), (4, 4096), (8, 4096), (8, 8192), (16, 4096), (16, 8192)):
            _page_task.GATHER_WARPS, _page_task.DENSE_CHUNK = warps, chunk
            ms = bench(lambda: ops.gather_and_maybe_dequant_cache(src, dst, table, cu, total, "fp8", scale, seq), args).ms
            tbs = 3 * total * 576 / ms / 1e9
            print(f"sweep: {name} {warps} {chunk} {ms * 1e3:.1f} {tbs:.2f} {100 * tbs / copy_tbs:.0f}%", flush=True)
        del src, dst
    _page_task.GATHER_WARPS, _page_task.DENSE_CHUNK = defaults
    writer_defaults = dict(concat_module.WRITER_TILING)
    print("sweep: scenario kv_cache_dtype tokens warps us TB/s %copy", flush=True)
    for name in ("single-60k", "single-300k"):
        total = sum(SCENARIOS[name])
        kv_c = torch.randn(total, 512).bfloat16().to(DEVICE)
        k_pe = torch.randn(total, 64).bfloat16().to(DEVICE)
        num_blocks = -(-total // 64)
        slots = torch.randperm(num_blocks * 64)[:total].to(DEVICE)
        scale = torch.tensor([0.1], device=DEVICE)
        for kv_cache_dtype, entry in (("fp8", 576), ("fp8_ds_mla", 656), ("nvfp4_ds_mla", 352)):
            cache = torch.empty(num_blocks, 64, entry, dtype=torch.uint8, device=DEVICE)
            key = kv_cache_dtype if kv_cache_dtype != "fp8" else "element"
            for tokens, warps in ((4, 4), (8, 4), (16, 4), (16, 8), (32, 8)):
                concat_module.WRITER_TILING[key] = (tokens, warps)
                ms = bench(lambda: ops.concat_and_cache_mla(kv_c, k_pe, cache, slots, kv_cache_dtype, scale), args).ms
                tbs = total * (2 * 576 + entry + 8) / ms / 1e9
                print(f"sweep: {name} {kv_cache_dtype} {tokens} {warps} {ms * 1e3:.1f} {tbs:.2f} "
                      f"{100 * tbs / copy_tbs:.0f}%", flush=True)
            concat_module.WRITER_TILING.update(writer_defaults)
            del cache
        del kv_c, k_pe


def fixed_and_rate(rows):
    """Per op: (op, fixed µs, TB/s) from ``time = fixed + bytes / rate`` fitted over the scenarios."""
    fits = []
    for op in dict.fromkeys(r["op"] for r in rows):
        points = [(r["mbytes"], r["ours_us"]) for r in rows if r["op"] == op]
        if len(points) < 2:
            continue
        mean_x = sum(x for x, _ in points) / len(points)
        mean_y = sum(y for _, y in points) / len(points)
        slope = (sum((x - mean_x) * (y - mean_y) for x, y in points)
                 / max(sum((x - mean_x) ** 2 for x, _ in points), 1e-12))  # µs per MB
        fits.append((op, mean_y - slope * mean_x, 1 / slope if slope > 0 else float("inf")))
    return fits


def markdown(rows, copy_tbs, device_name, elapsed, limiter_lines=()):
    lines = [
        "# KV-cache kernels: benchmark",
        "",
        f"Reproduce: `{COMMAND}` (GPU; writes this file and kv_cache.png).",
        "",
        f"Device: {device_name}. Copy bandwidth measured in the same run (2 GiB device-to-device "
        f"`copy_`, read + write bytes, an eager loop: captured in a graph, a memcpy node, "
        f"it measured 2.7 TB/s): **{copy_tbs:.2f} TB/s**. Block 64, entry 576, every "
        "request starting at `13 + (17 r) % 64` (non-aligned), block tables a random permutation. "
        "Times are per launch: a CUDA graph of back-to-back launches (about 3 ms of work, at least 5) replayed "
        "after an L2 flush, median of 7 trials, fastest–slowest trial beside it (`benchmarks/_timing.py`; "
        "the PyTorch path, timed with the same method, cannot be captured and is an eager loop of the same length). TB/s = bytes the op must read + "
        "write / time. \"ours\" is the default wrapper (index values checked in the kernel: a bad one "
        "clears the index flag and stops the kernel with a `trap`; no host read); \"unchecked\" is the "
        "same kernel in index mode `record` (compiled without the trap); \"default ÷ unchecked\" times "
        "the two interleaved in one loop (15 trials, each replaying one graph of each, the order "
        "alternating; median of the per-trial ratios, slowest–fastest ratio beside it). \"host read\" is the previous default wrapper's cost model: one "
        "device-to-host read of `seq_starts`/`slot_mapping` per call before the launch (not capturable, "
        "an eager loop). \"torch\" is the PyTorch path a user would write "
        "(repeat_interleave + advanced indexing + `.to()`).",
        "",
        "\"copy, same bytes\" is a plain copy kernel (Triton, one load and one store per word) moving the "
        "op's bytes, timed the same way: the most one launch of that size reaches on this device; at 60K "
        "tokens it is itself short of the 2 GiB copy bandwidth (launch ramp-up and drain).",
        "",
        "| scenario | op | tokens | MB moved | ours µs | min–max | TB/s | % of copy | copy, same bytes µs | % of that | unchecked µs | default ÷ unchecked | host read µs | torch µs | speed-up vs torch |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        torch_us = "—" if r["torch_us"] != r["torch_us"] else f"{r['torch_us']:.1f}"
        speed = "—" if r["speedup"] != r["speedup"] else f"{r['speedup']:.1f}×"
        lines.append(
            f"| {r['scenario']} | {r['op']} | {r['tokens']} | {r['mbytes']:.0f} | {r['ours_us']:.1f} | "
            f"{r['spread']} | {r['tbs']:.2f} | {r['pct_copy']:.0f}% | {r['copy_us']:.1f} | {r['pct_same_bytes']:.0f}% | "
            f"{r['unchecked_us']:.1f} | "
            f"{r['ratio']:.3f}× ({r.get('ratio_spread', 'n/a')}) | {r['host_read_us']:.1f} | {torch_us} | {speed} |"
        )
    lines += [
        "",
        "## Fixed cost and streaming rate",
        "",
        "Least-squares fit of each op's time against the bytes it moves over the scenarios: "
        "`time = fixed + bytes / rate`. `fixed` is what a launch costs whatever its size (ramp-up, "
        "the mapping prologue, the tail of the last wave); `rate` is the bandwidth the op streams at "
        "once running. At 60K tokens the fixed part is the difference between the op's % of copy and "
        "its streaming rate's.",
        "",
        "| op | fixed µs | streaming TB/s | streaming % of copy |",
        "|---|---:|---:|---:|",
    ]
    for op, fixed, rate in fixed_and_rate(rows):
        lines.append(f"| {op} | {fixed:.1f} | {rate:.2f} | {100 * rate / copy_tbs:.0f}% |")
    lines += [
        "",
        "## Page-task vs per-token gather (`gather_and_maybe_dequant_cache`, fp8 -> bf16)",
        "",
        "Per-token = the pre-#51739 design (one program per output token, request from a "
        "`token_to_seq` back-map), kept in this benchmark only. Its back-map is built on the "
        "device with `repeat_interleave(..., output_size=T)` (timed separately; the caller "
        "pays it per chunk).",
        "",
        "| scenario | tokens | page-task µs | per-token µs | token_to_seq build µs | page-task speed-up (kernel) | (incl. build) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "per_token_us" in r:
            lines.append(
                f"| {r['scenario']} | {r['tokens']} | {r['ours_us']:.1f} | {r['per_token_us']:.1f} | "
                f"{r['token_to_seq_us']:.1f} | {r['per_token_us'] / r['ours_us']:.2f}× | "
                f"{(r['per_token_us'] + r['token_to_seq_us']) / r['ours_us']:.2f}× |"
            )
    if limiter_lines:
        lines += [
            "",
            "## What limits the fp8_ds_mla writer",
            "",
            "The writer's stages timed side by side (benchmark-only copies of the kernel, "
            "`ds_mla_writer_variant`, random slots, 4 tokens per program): the same stages, the tile "
            "amax left out (a constant scale: wrong bytes, timed only), and the previous per-element "
            "`div_rn`.",
            "",
            "| tokens | variant | µs | min–max | % of copy |",
            "|---:|---|---:|---:|---:|",
            *limiter_lines,
        ]
    if DEVICE == "cuda":
        lines += ["", PROFILE_NOTE.rstrip("\n")]
    lines += ["", f"Benchmark wall time: {elapsed:.0f} s.", ""]
    return "\n".join(lines)


def plot(rows, copy_tbs, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    ops_seen = list(dict.fromkeys(r["op"] for r in rows))
    for op in ops_seen:
        mine = sorted((r["tokens"], r["tbs"], r["torch_us"], r["mbytes"]) for r in rows if r["op"] == op)
        line, = ax.plot([m[0] for m in mine], [m[1] for m in mine], marker="o", label=op)
        torch_pts = [(m[0], m[3] / m[2]) for m in mine if m[2] == m[2]]  # MB / µs = TB/s
        if torch_pts:
            ax.plot([p[0] for p in torch_pts], [p[1] for p in torch_pts], ls=":", marker="x", color=line.get_color())
    per_token = sorted((r["tokens"], r["mbytes"] / r["per_token_us"]) for r in rows if "per_token_us" in r)
    ax.plot([p[0] for p in per_token], [p[1] for p in per_token], ls="--", marker="s", color="gray",
            label="per-token gather (pre-#51739, benchmark only)")
    ax.axhline(copy_tbs, color="black", lw=1)
    ax.axhline(0.85 * copy_tbs, color="black", lw=1, ls="--")
    ax.text(min(r["tokens"] for r in rows), copy_tbs * 1.01, "device copy", fontsize=8)
    ax.text(min(r["tokens"] for r in rows), 0.85 * copy_tbs * 1.01, "85% of copy", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("tokens gathered (scenario total)")
    ax.set_ylabel("effective bandwidth, TB/s (read + write)")
    ax.set_title("KV-cache ops on the H200: ours (solid) vs PyTorch path (dotted)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--block-size", type=int, default=64)
    parser.add_argument("--entry-size", type=int, default=576)
    parser.add_argument("--trials", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--out-dir", default=str(Path(__file__).resolve().parent.parent / "reports" / "benchmarks"))
    parser.add_argument("--json", default=None, help="also write the raw rows here")
    parser.add_argument("--sweep", action="store_true", help="also time other dense-gather tilings (printed only)")
    parser.add_argument("--smoke", action="store_true", help="tiny CPU run (TRITON_INTERPRET=1) to check the script")
    parser.add_argument("--profile", action="store_true",
                        help="one launch of each op per scenario, nothing timed or written (for ncu)")
    args = parser.parse_args(argv)
    global DEVICE, PROFILE
    PROFILE = args.profile
    if args.smoke:
        DEVICE = "cpu"
        for name in SCENARIOS:
            SCENARIOS[name] = [n // 2000 for n in SCENARIOS[name]]
    elif not torch.cuda.is_available():
        sys.exit("bench_kv_cache needs a CUDA device")
    if args.entry_size != 576:
        sys.exit("the upconvert scenarios need entry 576")
    start = time.time()
    if PROFILE:
        for name in args.scenarios:
            print(name, flush=True)
            run_scenario(name, SCENARIOS[name], args, 1.0)
        return
    copy_tbs = copy_bandwidth(args)
    print(f"copy bandwidth {copy_tbs:.2f} TB/s", flush=True)
    rows = []
    for name in args.scenarios:
        print(name, flush=True)
        rows += run_scenario(name, SCENARIOS[name], args, copy_tbs)
    limiter_lines = writer_limiters(args, copy_tbs) if DEVICE == "cuda" else []
    if args.sweep:
        sweep(args, copy_tbs)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device_name = torch.cuda.get_device_name() if DEVICE == "cuda" else "CPU smoke run"
    text = markdown(rows, copy_tbs, device_name, time.time() - start, limiter_lines)
    (out / "kv_cache.md").write_text(text)
    plot(rows, copy_tbs, out / "kv_cache.png")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(copy_tbs=copy_tbs, rows=rows), indent=1))
    print(text)


if __name__ == "__main__":
    main()
