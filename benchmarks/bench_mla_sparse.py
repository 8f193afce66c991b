"""Benchmark of the KERNEL-ATTN-MLA-SPARSE row: the sparse-MLA top-k index
remap and the MLA chunked-context iteration that drives the gathers.

Prints a markdown table and writes it to ``reports/benchmarks/mla_sparse.md``
(with the reproducing command at the top) and a plot to
``reports/benchmarks/mla_sparse.png``. Everything is timed in one run with
``_timing.time_gpu`` (CUDA-graph replay of back-to-back launches after an L2
flush, median of 7 trials and the fastest/slowest), next to the device's measured copy
bandwidth (a 1 GiB device-to-device copy, read + write bytes) and bf16 matmul
rate (8192^3), and next to the PyTorch code a user would write instead.

Needs a CUDA device; nothing here is a test (no timed assertions).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _bootstrap  # noqa: F401  (portq_kernels from a plain checkout)
import torch
import triton
from _timing import time_gpu

from portq_kernels.mla_prefill.chunked_context import (
    allocate_chunked_prefill_workspace,
    build_chunked_context_metadata,
    determine_chunked_prefill_workspace_size,
    expand_context_chunk,
    gather_context_chunk,
    iter_prefill_context_chunks,
)
from portq_kernels.mla_sparse import reference as sparse_ref
from portq_kernels.mla_sparse import triton_convert_req_index_to_global_index
from portq_kernels.mla_sparse.convert_index import _launch_remap

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMAND = "python3 benchmarks/bench_mla_sparse.py"

NUM_TOKENS, NUM_REQUESTS, BLOCK_SIZE, BLOCKS_PER_REQUEST = 4096, 32, 64, 1024
CONTEXT_TOKENS = 64 * 1024
HEADS, NOPE_DIM, V_DIM, KV_LORA_RANK, ROPE_DIM = 16, 128, 128, 512, 64  # DeepSeek at TP 8


def bench_ms(fn) -> float:
    return time_gpu(fn).ms


def device_ceilings(device) -> tuple[float, float]:
    """(copy bandwidth in bytes/s counting read + write, bf16 matmul FLOP/s)."""
    src = torch.randint(0, 255, (1 << 30,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    # An eager loop: captured in a graph (a memcpy node) the copy measured 2.7 TB/s.
    copy_bw = 2 * src.numel() / (time_gpu(lambda: dst.copy_(src), graph=False).ms * 1e-3)
    del src, dst
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    rate = 2 * 8192**3 / (bench_ms(lambda: a @ b) * 1e-3)
    return copy_bw, rate


def remap_inputs(device, topk: int):
    g = torch.Generator(device="cpu").manual_seed(0)
    block_table = torch.randint(0, NUM_REQUESTS * BLOCKS_PER_REQUEST,
                                (NUM_REQUESTS, BLOCKS_PER_REQUEST), generator=g,
                                dtype=torch.int32)
    tok = torch.randint(0, BLOCKS_PER_REQUEST * BLOCK_SIZE, (NUM_TOKENS, topk), generator=g)
    tok[torch.rand(NUM_TOKENS, topk, generator=g) < 0.1] = -1
    req_id = torch.randint(0, NUM_REQUESTS, (NUM_TOKENS,), generator=g, dtype=torch.int32)
    return req_id.to(device), block_table.to(device), tok.to(torch.int32).to(device)


def forced_tiled_counting(req_id, block_table, tok, topk):
    """The multi-tile counting path at a width the wrapper would run as one tile:
    -1 pre-fill, zeroed counters and atomics, what a tiled kernel must pay."""
    out = torch.empty_like(tok)
    counts = torch.empty(tok.shape[0], dtype=torch.int32, device=tok.device)

    def run():
        out.fill_(-1)
        counts.zero_()
        _launch_remap(req_id, block_table, tok, out, counts, None, None, rank_stride=0,
                      BLOCK_SIZE=BLOCK_SIZE, BLOCK_STRIDE_ROWS=None, NUM_TOPK_TOKENS=topk,
                      tiling=(False, 128, topk // 128, 4), count_valid=True, compact=True,
                      dcp=(1, 0, 1))
    return run


ROTATED_SETS = 8


def rotated_remap(req_id, block_table, tok, topk):
    """The no-counts remap cycling over ``ROTATED_SETS`` copies of its top-k
    indices (each launch reads indices no launch touched since that set was
    last used): one set's 67 MB is within about twice the L2, so back-to-back
    launches over one set partly run from L2; this row is the figure with the
    L2 rotated out, beside the one-set row."""
    sets = [tok.clone() for _ in range(ROTATED_SETS)]
    state = {"next": 0}

    def run():
        s = sets[state["next"] % ROTATED_SETS]
        state["next"] += 1
        return triton_convert_req_index_to_global_index(req_id, block_table, s, BLOCK_SIZE=BLOCK_SIZE,
                                                        NUM_TOPK_TOKENS=topk)
    return run


def bench_remap(device, copy_bw):
    rows = []
    for topk in (2048, 2176):
        req_id, block_table, tok = remap_inputs(device, topk)
        moved = 2 * tok.numel() * 4 + req_id.numel() * 4  # indices in + out, req ids
        variants = [
            ("ours, no counts", False, lambda: triton_convert_req_index_to_global_index(
                req_id, block_table, tok, BLOCK_SIZE=BLOCK_SIZE, NUM_TOPK_TOKENS=topk)),
            ("ours, counts + compaction, single tile", True, lambda: (
                triton_convert_req_index_to_global_index(
                    req_id, block_table, tok, BLOCK_SIZE=BLOCK_SIZE, NUM_TOPK_TOKENS=topk,
                    return_valid_counts=True))),
            ("ours, counts + compaction, tiled + atomics", True,
             forced_tiled_counting(req_id, block_table, tok, topk)),
            ("ours, no counts, 8 input sets rotated", False, rotated_remap(req_id, block_table, tok, topk)),
            ("PyTorch, no counts", False, lambda: sparse_ref.triton_convert_req_index_to_global_index(
                req_id, block_table, tok, BLOCK_SIZE=BLOCK_SIZE, NUM_TOPK_TOKENS=topk)),
            ("PyTorch, counts + compaction (sort)", True, lambda: (
                sparse_ref.triton_convert_req_index_to_global_index(
                    req_id, block_table, tok, BLOCK_SIZE=BLOCK_SIZE, NUM_TOPK_TOKENS=topk,
                    return_valid_counts=True))),
        ]
        timings = {name: time_gpu(fn) for name, _, fn in variants}
        torch_base = {False: timings["PyTorch, no counts"].ms,
                      True: timings["PyTorch, counts + compaction (sort)"].ms}
        for name, counts, _ in variants:
            ms = timings[name].ms
            rows.append(dict(topk=topk, variant=name, us=ms * 1e3, spread=timings[name].spread(), mb=moved / 1e6,
                             gbps=moved / (ms * 1e-3) / 1e9,
                             pct_copy=100 * moved / (ms * 1e-3) / copy_bw,
                             vs_torch=torch_base[counts] / ms))
    return rows


def remap_limiter(device, copy_bw, topk=2048):
    """Where the no-counts remap's time goes: column tile width and warps, and
    the same launch with every row a prefill row (no block-table lookup), the
    counting single tile at 4-16 warps, next to a copy of the same bytes."""
    req_id, block_table, tok = remap_inputs(device, topk)
    moved = 2 * tok.numel() * 4 + req_id.numel() * 4
    out = torch.empty_like(tok)
    prefill_ids = torch.zeros(tok.shape[0], dtype=torch.int32, device=device)
    starts = torch.zeros(1, dtype=torch.int32, device=device)
    rows = []
    for width, warps in ((128, 4), (256, 4), (512, 4), (1024, 4), (1024, 8), (2048, 8), (2048, 16)):
        for prefill in (False, True):
            def run(width=width, warps=warps, prefill=prefill):
                _launch_remap(req_id, block_table, tok, out, None,
                              prefill_ids if prefill else None, starts if prefill else None,
                              rank_stride=0, BLOCK_SIZE=BLOCK_SIZE, BLOCK_STRIDE_ROWS=None,
                              NUM_TOPK_TOKENS=topk, tiling=(False, width, topk // width, warps),
                              count_valid=False, compact=False, dcp=(1, 0, 1))
            t = time_gpu(run)
            rows.append(dict(variant=f"tile {width}, {warps} warps" + (", prefill rows (no table lookup)" if prefill else ""),
                             us=t.us, spread=t.spread(), pct_copy=100 * moved / (t.ms * 1e-3) / copy_bw))
    counts = torch.empty(tok.shape[0], dtype=torch.int32, device=device)
    for warps in (4, 8, 16):
        def run(warps=warps):
            _launch_remap(req_id, block_table, tok, out, counts, None, None, rank_stride=0,
                          BLOCK_SIZE=BLOCK_SIZE, BLOCK_STRIDE_ROWS=None, NUM_TOPK_TOKENS=topk,
                          tiling=(True, triton.next_power_of_2(topk), 1, warps), count_valid=True,
                          compact=True, dcp=(1, 0, 1))
        t = time_gpu(run)
        rows.append(dict(variant=f"counts + compaction, single tile, {warps} warps", us=t.us, spread=t.spread(),
                         pct_copy=100 * moved / (t.ms * 1e-3) / copy_bw))
    t = time_gpu(lambda: out.copy_(tok), graph=False)
    rows.append(dict(variant="out.copy_(token_indices) (same bytes, no index work)", us=t.us, spread=t.spread(),
                     pct_copy=100 * 2 * tok.numel() * 4 / (t.ms * 1e-3) / copy_bw))
    for r in rows:
        print(f"remap limiter: {r['variant']:60s} {r['us']:8.1f} us [{r['spread']}] {r['pct_copy']:5.1f}%", flush=True)
    return rows


def chunked_context_inputs(device, kv_cache_dtype):
    g = torch.Generator(device="cpu").manual_seed(1)
    num_blocks = CONTEXT_TOKENS // BLOCK_SIZE + 16
    block_table = torch.randperm(num_blocks, generator=g)[:CONTEXT_TOKENS // BLOCK_SIZE]
    block_table = block_table.to(torch.int32)[None, :].to(device)
    values = torch.randn(num_blocks, BLOCK_SIZE, KV_LORA_RANK + ROPE_DIM, generator=g)
    scale = torch.tensor([0.05], dtype=torch.float32, device=device)
    if kv_cache_dtype == "auto":
        cache = values.to(torch.bfloat16).to(device)
    else:
        cache = (values / 0.05).clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8)
        cache = cache.to(device)
    weight = (torch.randn(HEADS * (NOPE_DIM + V_DIM), KV_LORA_RANK, generator=g) * 0.05)
    return cache, block_table, scale, weight.to(torch.bfloat16).to(device)


def torch_context_path(cache, block_table, weight, kv_cache_dtype, scale):
    """What a user would write: gather by advanced indexing (dequantising with
    ``.to``), one bf16 matmul, split K/V and broadcast the rope key."""
    pos = torch.arange(CONTEXT_TOKENS, device=cache.device)
    slots = block_table[0, pos // BLOCK_SIZE].long() * BLOCK_SIZE + pos % BLOCK_SIZE
    flat = cache.view(-1, cache.shape[-1])

    def gather():
        rows = flat[slots]
        if kv_cache_dtype != "auto":
            rows = (rows.view(torch.float8_e4m3fn).float() * scale).to(torch.bfloat16)
        return rows

    def expand(rows):
        y = (rows[:, :KV_LORA_RANK] @ weight.T).view(-1, HEADS, NOPE_DIM + V_DIM)
        pe = rows[:, None, KV_LORA_RANK:].expand(-1, HEADS, ROPE_DIM)
        return torch.cat([y[..., :NOPE_DIM], pe], dim=-1), y[..., NOPE_DIM:].contiguous()

    return gather, expand


def bench_chunked_context(device, copy_bw, matmul_rate):
    rows = []
    workspace_size = determine_chunked_prefill_workspace_size(163840, 256, BLOCK_SIZE)
    for kv_cache_dtype in ("auto", "fp8"):
        cache, block_table, scale, weight = chunked_context_inputs(device, kv_cache_dtype)
        workspace = allocate_chunked_prefill_workspace(workspace_size, 576, torch.bfloat16,
                                                       device)
        meta = build_chunked_context_metadata(torch.tensor([CONTEXT_TOKENS]), workspace,
                                              BLOCK_SIZE)
        cache_bytes = cache.element_size() * 576
        gather_bytes = CONTEXT_TOKENS * (cache_bytes + 2 * 576)
        expand_flops = 2 * CONTEXT_TOKENS * KV_LORA_RANK * HEADS * (NOPE_DIM + V_DIM)
        expand_bytes = CONTEXT_TOKENS * (2 * 576 + 2 * HEADS * (NOPE_DIM + ROPE_DIM + V_DIM))
        gather_fn = lambda: [gather_context_chunk(cache, block_table, meta, c, kv_cache_dtype,
                                                  scale) for c in range(meta.num_chunks)]
        gather_fn()
        expand_fn = lambda: [expand_context_chunk(meta, c, scale, weight, None, HEADS, V_DIM,
                                                  KV_LORA_RANK) for c in range(meta.num_chunks)]
        total_fn = lambda: list(iter_prefill_context_chunks(
            cache, block_table, meta, kv_cache_dtype, scale, weight, None, HEADS, V_DIM,
            KV_LORA_RANK))
        t_gather, t_expand, t_total = bench_ms(gather_fn), bench_ms(expand_fn), bench_ms(total_fn)
        torch_gather, torch_expand = torch_context_path(cache, block_table, weight,
                                                        kv_cache_dtype, scale)
        gathered = torch_gather()
        tt_gather, tt_expand = bench_ms(torch_gather), bench_ms(lambda: torch_expand(gathered))
        limit_gather = gather_bytes / copy_bw * 1e3
        limit_expand = max(expand_flops / matmul_rate, expand_bytes / copy_bw) * 1e3
        for step, ours, theirs, limit in (
                ("gather", t_gather, tt_gather, limit_gather),
                ("expansion", t_expand, tt_expand, limit_expand),
                ("whole iteration", t_total, tt_gather + tt_expand, limit_gather + limit_expand)):
            rows.append(dict(cache=kv_cache_dtype, step=step, chunks=meta.num_chunks,
                             us=ours * 1e3, torch_us=theirs * 1e3, limit_us=limit * 1e3,
                             vs_torch=theirs / ours, of_limit=100 * limit / ours))
    return rows


def render(copy_bw, matmul_rate, remap_rows, context_rows, device_name, limiter_rows=()) -> str:
    lines = [
        "# Sparse-MLA index remap and MLA chunked-context iteration",
        "",
        f"Reproduce: `{COMMAND}` (on a CUDA machine; writes this file and `mla_sparse.png`).",
        "",
        f"Device: {device_name}. Measured in the same run: copy bandwidth "
        f"{copy_bw / 1e12:.2f} TB/s (1 GiB device-to-device copy, read + write bytes, an eager loop), "
        f"bf16 matmul {matmul_rate / 1e12:.0f} TFLOP/s (8192^3). Times are per launch: CUDA-graph "
        "replay of back-to-back launches (about 3 ms of work, at least 5) after an L2 flush, median "
        "of 7 trials, fastest–slowest beside it (`benchmarks/_timing.py`; PyTorch code that "
        "synchronises is an eager loop). The remap reads no index value back and has no index flag "
        "(every out-of-range id is a defined `-1`), so its default wrapper is the unchecked kernel.",
        "",
        f"## Index remap: {NUM_TOKENS} tokens x top-k, block size {BLOCK_SIZE}, "
        f"{NUM_REQUESTS} requests x {BLOCKS_PER_REQUEST} blocks, 10 % empty entries",
        "",
        "Bytes moved = top-k indices read + written (int32) + request ids; block-table "
        "lookups are not counted (they hit in L2). \"vs PyTorch\" = the vectorised PyTorch "
        "reference with the same outputs (`portq_kernels.mla_sparse.reference`) / ours.",
        "",
        "| top-k | variant | time (us) | min–max (us) | MB moved | GB/s | % of copy BW | vs PyTorch |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in remap_rows:
        lines.append(f"| {r['topk']} | {r['variant']} | {r['us']:.1f} | {r['spread']} | {r['mb']:.1f} | "
                     f"{r['gbps']:.0f} | {r['pct_copy']:.0f} % | {r['vs_torch']:.1f}x |")
    if limiter_rows:
        lines += ["", "## What limits the remap (top-k 2048, no counts)", "",
                  "Column tile width and warps per program, each with and without the block-table "
                  "lookup (every row a prefill-workspace row); the counting single tile at 4-16 warps; "
                  "a plain copy of the same bytes.", "",
                  "| variant | time (us) | min–max (us) | % of copy BW |", "|---|---:|---:|---:|"]
        lines += [f"| {r['variant']} | {r['us']:.1f} | {r['spread']} | {r['pct_copy']:.0f} % |" for r in limiter_rows]
    lines += [
        "",
        f"## Chunked-context iteration: one request, {CONTEXT_TOKENS} cached tokens, "
        f"{HEADS} heads (DeepSeek at TP 8), Dn={NOPE_DIM}, Dv={V_DIM}",
        "",
        "Workspace from `determine_chunked_prefill_workspace_size(163840, 256, 64)`. Gather "
        "= `gather_and_maybe_dequant_cache` into the bf16 workspace; expansion = "
        "`gather_kv_b_proj` (bf16 weight). PyTorch = advanced indexing (+ `.to()` dequant), "
        "one bf16 `torch.matmul`, split + broadcast rope. Limit = bytes / copy BW for the "
        "gather, max(FLOPs / matmul rate, bytes / copy BW) for the expansion.",
        "",
        "| cache | step | chunks | ours (us) | PyTorch (us) | limit (us) | vs PyTorch | "
        "% of limit |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in context_rows:
        lines.append(f"| {r['cache']} | {r['step']} | {r['chunks']} | {r['us']:.0f} | "
                     f"{r['torch_us']:.0f} | {r['limit_us']:.0f} | {r['vs_torch']:.2f}x | "
                     f"{r['of_limit']:.0f} % |")
    return "\n".join(lines) + "\n"


def plot(remap_rows, context_rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    labels = [f"{r['topk']}: {r['variant']}" for r in remap_rows]
    ax1.barh(labels, [r["us"] for r in remap_rows],
             color=["tab:blue" if r["variant"].startswith("ours") else "tab:gray"
                    for r in remap_rows])
    ax1.set_xscale("log")
    ax1.set_xlabel("time (us, log)")
    ax1.set_title(f"top-k index remap, {NUM_TOKENS} tokens")
    ax1.invert_yaxis()
    steps = [r for r in context_rows if r["step"] != "whole iteration"]
    names = [f"{r['cache']} {r['step']}" for r in steps]
    x = range(len(steps))
    width = 0.28
    ax2.bar([i - width for i in x], [r["us"] for r in steps], width, label="ours")
    ax2.bar(list(x), [r["torch_us"] for r in steps], width, label="PyTorch")
    ax2.bar([i + width for i in x], [r["limit_us"] for r in steps], width, label="limit")
    ax2.set_xticks(list(x), names)
    ax2.set_ylabel("time (us)")
    ax2.set_title(f"chunked context, {CONTEXT_TOKENS} cached tokens")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=REPO_ROOT / "reports" / "benchmarks")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_mla_sparse: needs a CUDA device", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    copy_bw, matmul_rate = device_ceilings(device)
    remap_rows = bench_remap(device, copy_bw)
    limiter_rows = remap_limiter(device, copy_bw)
    context_rows = bench_chunked_context(device, copy_bw, matmul_rate)
    table = render(copy_bw, matmul_rate, remap_rows, context_rows,
                   torch.cuda.get_device_name(device), limiter_rows)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "mla_sparse.md").write_text(table)
    plot(remap_rows, context_rows, args.out_dir / "mla_sparse.png")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
