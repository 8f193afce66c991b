"""Benchmark gather_kv_b_proj (MLA cached-prefix expansion) on a CUDA GPU.

Compares, from one run on one device: the portq op (its default tile
configuration, plus a sweep of candidate tile configurations), the PyTorch
path a user would write (gather + ``torch.matmul`` + copies), and a
serial-loop variant with upstream's pre-#4776 geometry (one program per
(sequence, head) walking the context chunk by chunk; it exists only here, for
comparison), against the hardware roofline measured in the same run (device
copy bandwidth and bf16/fp8 matmul rates).

Roofline of a shape: ``max(FLOPs / matmul rate, bytes / copy bandwidth)``
with FLOPs ``2*T*R*H*(Dn+Dv)`` and bytes = latent rows read once + weight +
outputs written once; the matmul rate is the bf16 one (fp8 cache values are
upcast exactly for a bf16 weight), or the fp8 one for the rows where cache
and weight are both fp8 (fp8 x fp8 operands are possible there).

    python benchmarks/bench_gather_kv_b_proj.py            # GPU: measure, write md/png/json
    python benchmarks/bench_gather_kv_b_proj.py --from-json results.json   # re-render only

The table names the configuration the op's launch picks; ``--from-json``
re-renders a saved sweep with the op's current choice (no GPU needed).
"""
from __future__ import annotations

import _bootstrap  # noqa: F401

import argparse
import json
import math
import os
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
REPORT_MD = REPO / "reports" / "benchmarks" / "gather_kv_b_proj.md"
REPORT_PNG = REPO / "reports" / "benchmarks" / "gather_kv_b_proj.png"
LIMITERS_MD = REPO / "reports" / "benchmarks" / "gather_kv_b_proj_limiters.md"
COMMAND = "python benchmarks/bench_gather_kv_b_proj.py"

RANK, ROPE, NOPE, VDIM = 512, 64, 128, 128

# (label, batch, context per sequence, heads)
SHAPES = [
    ("1x4096 h12", 1, 4096, 12),
    ("1x32000 h12", 1, 32000, 12),
    ("1x65536 h12", 1, 65536, 12),
    ("1x109440 h12", 1, 109440, 12),
    ("64x2048 h16", 64, 2048, 16),
    ("256x1024 h16", 256, 1024, 16),
    ("64x2048 h128", 64, 2048, 128),
    ("256x1024 h128", 256, 1024, 128),
]
CACHES = ("fp8", "bf16")
PAGE_SIZES = (1, 64)


# (shape label, cache, weight): extra rows with an fp8 weight, page size 1 only.
FP8_WEIGHT_ROWS = ("1x32000 h12", "64x2048 h16")


def sweep_configs():
    """The op's candidates, plus (``--explore``) variants measured here only."""
    from portq_kernels.mla_prefix.gather_kv_b_proj import GPU_CANDIDATE_CONFIGS, TileConfig

    configs = list(GPU_CANDIDATE_CONFIGS)
    if os.environ.get("GATHER_KV_B_PROJ_EXPLORE"):
        configs += [
            TileConfig(chunk_k=128, block_n=256, block_k=64, group_rows=32, num_warps=8, num_stages=4),
            TileConfig(chunk_k=64, block_n=256, block_k=32, group_rows=32, num_warps=4, num_stages=4),
            TileConfig(chunk_k=128, block_n=256, block_k=64, group_rows=32, num_warps=8, num_stages=3,
                       store_tma=True),
            TileConfig(chunk_k=128, block_n=256, block_k=64, group_rows=8, num_warps=8, num_stages=3),
            TileConfig(chunk_k=128, block_n=256, block_k=64, group_rows=32, grid_stride=True,
                       num_warps=8, num_stages=3),
            TileConfig(chunk_k=128, block_n=256, block_k=32, group_rows=32, num_warps=8, num_stages=5),
            TileConfig(chunk_k=128, block_n=128, block_k=128, group_rows=32, fp8_dot=True,
                       fp8_promote_k=128, num_warps=8, num_stages=3),
            TileConfig(chunk_k=128, block_n=256, block_k=128, group_rows=32, fp8_dot=True,
                       fp8_promote_k=512, num_warps=8, num_stages=2),
            TileConfig(chunk_k=64, block_n=256, block_k=64, group_rows=32, fp8_dot=True,
                       num_warps=4, num_stages=3),
        ]
    return configs


def config_name(c) -> str:
    return c.name


def op_config_name(cache: str, weight: str) -> str:
    """Name of the configuration the public op launches for these dtypes."""
    from portq_kernels.mla_prefix.gather_kv_b_proj import default_config

    dtypes = {"fp8": torch.float8_e4m3fn, "bf16": torch.bfloat16}
    return default_config(torch.device("cuda"), "none", dtypes[cache], dtypes[weight]).name


def row_kinds(label):
    """(cache, weight, page size) combinations measured for a shape."""
    kinds = [(cache, "bf16", s) for cache in CACHES for s in PAGE_SIZES]
    if label in FP8_WEIGHT_ROWS:
        kinds.append(("fp8", "fp8", 1))
    return kinds


# ------------------------------------------------------------------ serial-loop variant

def _serial_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def serial_loop_kernel(k_buffer, k_scale, kv_indptr, kv_indices, cu, weight, k_prefix, v_prefix,
                           num_heads, KBlockSize: tl.constexpr, ChunkK: tl.constexpr,
                           HEAD_DIM: tl.constexpr, KV_CDim: tl.constexpr, KV_PeDim: tl.constexpr,
                           CACHE_IS_FP8: tl.constexpr):
        """Upstream's paged geometry: one program per (sequence, head), a
        serial loop over the sequence's chunks, K and V from 128-wide segments."""
        pid = tl.program_id(0)
        b = pid // num_heads
        h = pid % num_heads
        start = tl.load(cu + b)
        length = tl.load(cu + b + 1) - start
        page_base = tl.load(kv_indptr + b)
        if CACHE_IS_FP8:
            ks = tl.load(k_scale).to(tl.float32)
        else:
            ks = 1.0
        offs_t = tl.arange(0, ChunkK)
        offs_d = tl.arange(0, HEAD_DIM)
        offs_k = tl.arange(0, 128)
        offs_pe = tl.arange(0, KV_PeDim)
        k_rows = (h * 2 * HEAD_DIM + offs_d).to(tl.int64)
        v_rows = k_rows + HEAD_DIM
        for chunk in range(0, tl.cdiv(length, ChunkK)):
            tok = chunk * ChunkK + offs_t
            ok = tok < length
            page = tl.load(kv_indices + page_base + tok // KBlockSize, mask=ok, other=0).to(tl.int64)
            lat = page * (KBlockSize * (KV_CDim + KV_PeDim)) + (tok % KBlockSize) * (KV_CDim + KV_PeDim)
            acc_k = tl.zeros([ChunkK, HEAD_DIM], dtype=tl.float32)
            acc_v = tl.zeros([ChunkK, HEAD_DIM], dtype=tl.float32)
            for seg in range(0, KV_CDim, 128):
                x = tl.load(k_buffer + lat[:, None] + (seg + offs_k)[None, :], mask=ok[:, None], other=0.0)
                x = x.to(tl.bfloat16)
                wk = tl.load(weight + k_rows[None, :] * KV_CDim + (seg + offs_k)[:, None])
                wv = tl.load(weight + v_rows[None, :] * KV_CDim + (seg + offs_k)[:, None])
                acc_k = tl.dot(x, wk.to(tl.bfloat16), acc_k)
                acc_v = tl.dot(x, wv.to(tl.bfloat16), acc_v)
            out = (start + tok).to(tl.int64)
            k_out = k_prefix + out[:, None] * (num_heads * (HEAD_DIM + KV_PeDim)) + h * (HEAD_DIM + KV_PeDim)
            tl.store(k_out + offs_d[None, :], (acc_k * ks).to(tl.bfloat16), mask=ok[:, None])
            pe = tl.load(k_buffer + lat[:, None] + KV_CDim + offs_pe[None, :], mask=ok[:, None], other=0.0)
            tl.store(k_out + HEAD_DIM + offs_pe[None, :], (pe.to(tl.float32) * ks).to(tl.bfloat16),
                     mask=ok[:, None])
            v_out = v_prefix + out[:, None] * (num_heads * HEAD_DIM) + h * HEAD_DIM
            tl.store(v_out + offs_d[None, :], (acc_v * ks).to(tl.bfloat16), mask=ok[:, None])

    return serial_loop_kernel


_SERIAL = None


def serial_loop(p, k_prefix, v_prefix):
    global _SERIAL
    if _SERIAL is None:
        _SERIAL = _serial_kernel()
    fp8 = p["k_buffer"].dtype != torch.bfloat16
    chunk = 32 if fp8 else 16  # upstream's ChunkK for fp8 / bf16 caches
    batch = p["cu"].numel() - 1
    _SERIAL[(batch * p["heads"],)](
        p["k_buffer"], p["k_scale"], p["kv_indptr"], p["kv_indices"], p["cu"], p["weight"],
        k_prefix, v_prefix, p["heads"], KBlockSize=p["page_size"], ChunkK=chunk, HEAD_DIM=NOPE,
        KV_CDim=RANK, KV_PeDim=ROPE, CACHE_IS_FP8=fp8, num_warps=4, num_stages=2)


def torch_path(p, k_prefix, v_prefix):
    """What a user writes: gather the latent rows, upcast, one matmul, copies.
    (The per-token slot index an engine already has is precomputed.)"""
    lat = p["k_buffer"].view(-1, RANK + ROPE).index_select(0, p["slot_index"])
    x = lat[:, :RANK].to(torch.bfloat16)
    y = torch.matmul(x, p["weight_bf16"].t())
    if p["k_buffer"].dtype != torch.bfloat16:
        y.mul_(p["k_scale"].to(torch.bfloat16))
    y = y.view(-1, p["heads"], NOPE + VDIM)
    k_prefix[..., :NOPE].copy_(y[..., :NOPE])
    v_prefix.copy_(y[..., NOPE:])
    pe = (lat[:, RANK:].float() * p["k_scale"]).to(torch.bfloat16)
    k_prefix[..., NOPE:].copy_(pe[:, None, :].expand(-1, p["heads"], -1))


# ------------------------------------------------------------------ inputs and ceilings

def make_problem(batch, ctx, heads, cache, page_size, dev, weight_kind="bf16"):
    gen = torch.Generator(device=dev).manual_seed(batch * 7 + ctx + heads)
    pages_per_seq = math.ceil(ctx / page_size)
    num_pages = batch * pages_per_seq
    cache_dtype = torch.float8_e4m3fn if cache == "fp8" else torch.bfloat16
    k_buffer = torch.randn(num_pages, page_size, RANK + ROPE, device=dev, generator=gen).to(cache_dtype)
    kv_indices = torch.randperm(num_pages, device=dev, generator=gen).to(torch.int32)
    kv_indptr = (torch.arange(batch + 1, device=dev) * pages_per_seq).to(torch.int32)
    cu = (torch.arange(batch + 1, device=dev) * ctx).to(torch.int32)
    weight = torch.randn(heads * (NOPE + VDIM), RANK, device=dev, generator=gen)
    weight = (weight * 0.05).to(torch.bfloat16) if weight_kind == "bf16" else weight.to(torch.float8_e4m3fn)
    tok = torch.arange(ctx, device=dev)
    pages = kv_indices.view(batch, pages_per_seq).long()[:, tok // page_size]
    slot_index = (pages * page_size + tok % page_size).reshape(-1)
    return dict(k_buffer=k_buffer, k_scale=torch.tensor([0.5], device=dev), kv_indptr=kv_indptr,
                kv_indices=kv_indices, cu=cu, weight=weight, weight_bf16=weight.to(torch.bfloat16), heads=heads, page_size=page_size,
                slot_index=slot_index, tokens=batch * ctx)


def traffic(tokens, heads, cache, weight="bf16"):
    flops = 2.0 * tokens * RANK * heads * (NOPE + VDIM)
    cache_bytes = 1 if cache == "fp8" else 2
    nbytes = (tokens * (RANK + ROPE) * cache_bytes + heads * (NOPE + VDIM) * RANK * (1 if weight == "fp8" else 2)
              + tokens * heads * (NOPE + ROPE + VDIM) * 2 + tokens * 8)
    return flops, nbytes


def measure_ceilings(time_ms):
    src = torch.empty(2 * 1024**3, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src), graph=False)  # captured in a graph, a memcpy node measured 2.7 TB/s
    copy_tbs = 2 * src.numel() / ms / 1e9
    del src, dst
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    ms = time_ms(lambda: a @ b)
    bf16_tflops = 2 * 8192**3 / ms / 1e9
    fp8_tflops = None
    try:
        a8, b8 = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device="cuda")
        ms = time_ms(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
        fp8_tflops = 2 * 8192**3 / ms / 1e9
    except Exception as exc:  # report, do not fail the run
        print(f"fp8 matmul rate not measured: {exc}", file=sys.stderr)
    return dict(copy_tbs=copy_tbs, bf16_tflops=bf16_tflops, fp8_tflops=fp8_tflops)


def op_shape_gemm(tokens, heads, time_ms):
    """The matmul ceiling of one shape: a bare GEMM ``[T, R] x [R, H*(Dn+Dv)]``
    into bf16, timed like the op. bf16 operands through ``torch.matmul``, and
    fp8 operands through ``torch._scaled_mm`` (None where it does not run)."""
    x = torch.randn(tokens, RANK, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(heads * (NOPE + VDIM), RANK, device="cuda", dtype=torch.bfloat16) * 0.05
    bf16_ms = time_ms(lambda: x @ w.t())
    fp8_ms = None
    try:
        x8, w8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device="cuda")
        fp8_ms = time_ms(lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one,
                                                  out_dtype=torch.bfloat16))
    except Exception as exc:  # report, do not fail the run
        print(f"fp8 GEMM of {tokens}x{heads} not measured: {exc}", file=sys.stderr)
    return dict(bf16_ms=bf16_ms, fp8_ms=fp8_ms)


def relevant(config, cache, weight):
    """Whether the sweep times ``config`` on a row: fp8-operand tiles only
    where cache and weight are both fp8 (elsewhere they run bf16 operands in
    a tile made for fp8, measured 1.4-2x slower), and bf16-operand tiles there
    only as the op's bf16 default (2x slower than fp8 operands)."""
    from portq_kernels.mla_prefix.gather_kv_b_proj import GPU_CONFIG

    fp8_pair = cache == weight == "fp8"
    return config.fp8_dot == fp8_pair or config == GPU_CONFIG


# ------------------------------------------------------------------ run

def _warm_one(job):
    """Compile one kernel variant in a worker (Triton's on-disk cache is
    shared, so the measuring process later loads it instead of compiling)."""
    cache, weight, page_size, config_index, serial_heads = job
    from portq_kernels.mla_prefix.gather_kv_b_proj import gather_kv_b_proj_with_config

    heads = serial_heads or 12
    p = make_problem(1, 256, heads, cache, page_size, "cuda", weight)
    k_out = torch.empty(256, heads, NOPE + ROPE, device="cuda", dtype=torch.bfloat16)
    v_out = torch.empty(256, heads, VDIM, device="cuda", dtype=torch.bfloat16)
    if serial_heads:
        serial_loop(p, k_out, v_out)
    else:
        try:
            # Batches of 1 and 64: the fused persistent loop specialises on the search depth.
            for q in (p, make_problem(64, 4, heads, cache, page_size, "cuda", weight)):
                gather_kv_b_proj_with_config(q["k_buffer"], q["k_scale"], q["kv_indptr"], q["kv_indices"], q["cu"],
                                             q["weight"], None, k_out, v_out, config=sweep_configs()[config_index])
        except Exception as exc:  # reported again (and skipped) when measured
            return job, f"{type(exc).__name__}: {str(exc)[:300]}"
    torch.cuda.synchronize()
    return job, None


def warm_compile(workers=12):
    import concurrent.futures
    import multiprocessing

    kinds = sorted({k for label, *_ in SHAPES for k in row_kinds(label)})
    jobs = [(cache, w, s, i, 0) for cache, w, s in kinds for i, c in enumerate(sweep_configs())
            if relevant(c, cache, w)]
    jobs += [(cache, w, s, 0, h) for cache, w, s in kinds for h in (12, 16)]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        for job, error in pool.map(_warm_one, jobs):
            if error:
                print(f"warm-up compile failed for {job}: {error}", flush=True)


def _timed(fn, bench):
    try:
        return bench(fn), None
    except Exception as exc:  # a variant that fails to compile or launch is reported, not fatal
        torch.cuda.synchronize()
        return None, f"{type(exc).__name__}: {str(exc)[:300]}"


def run(args):
    import triton
    from _timing import time_gpu, time_ratio

    from portq_kernels import validation
    from portq_kernels.mla_prefix.gather_kv_b_proj import gather_kv_b_proj, gather_kv_b_proj_with_config

    def in_mode(mode, fn):
        def call():
            with validation.index_checks(mode):
                fn()
        return call

    configs = sweep_configs()
    if args.profile:  # one launch of the op per row, nothing timed (for ncu)
        for label, batch, ctx, heads in [s for s in SHAPES if not args.only or args.only in s[0]]:
            for cache, weight, page_size in row_kinds(label):
                p = make_problem(batch, ctx, heads, cache, page_size, "cuda", weight)
                k_out = torch.empty(p["tokens"], heads, NOPE + ROPE, device="cuda", dtype=torch.bfloat16)
                v_out = torch.empty(p["tokens"], heads, VDIM, device="cuda", dtype=torch.bfloat16)
                gather_kv_b_proj(p["k_buffer"], p["k_scale"], p["kv_indptr"], p["kv_indices"], p["cu"],
                                 p["weight"], None, k_out, v_out)
                torch.cuda.synchronize()
                print(f"{label} {cache}x{weight} S={page_size}: one launch", flush=True)
        return None
    if not args.no_warm:
        warm_compile()
    if args.compile_only:
        return None
    ceilings = measure_ceilings(lambda fn, graph=True: time_gpu(fn, graph=graph).ms)
    print(f"device {torch.cuda.get_device_name()}: copy {ceilings['copy_tbs']:.2f} TB/s, "
          f"bf16 {ceilings['bf16_tflops']:.0f} TFLOP/s, fp8 {ceilings['fp8_tflops'] or float('nan'):.0f} TFLOP/s",
          flush=True)
    results = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
                   ceilings=ceilings, configs=[config_name(c) for c in configs], rows=[], kernels={})
    gemms = {}
    shapes = [s for s in SHAPES if not args.only or args.only in s[0]]
    bench = lambda fn: time_gpu(in_mode("record", fn), trials=args.trials).ms  # noqa: E731
    for label, batch, ctx, heads in shapes:
        for cache, weight, page_size in row_kinds(label):
            p = make_problem(batch, ctx, heads, cache, page_size, "cuda", weight)
            t = p["tokens"]
            k_out = torch.empty(t, heads, NOPE + ROPE, device="cuda", dtype=torch.bfloat16)
            v_out = torch.empty(t, heads, VDIM, device="cuda", dtype=torch.bfloat16)
            op_args = (p["k_buffer"], p["k_scale"], p["kv_indptr"], p["kv_indices"], p["cu"],
                       p["weight"], None, k_out, v_out)
            sweep, errors, agreement, first = {}, {}, {}, None
            for c in configs:
                name = config_name(c)
                if not relevant(c, cache, weight):
                    continue
                k_out.fill_(7.0)
                try:
                    handle = gather_kv_b_proj_with_config(*op_args, config=c)
                    n = getattr(handle, "n_regs", None), getattr(handle, "n_spills", None)
                    results["kernels"].setdefault(f"{name} | {cache}x{weight} S{page_size}",
                                                  dict(n_regs=n[0], n_spills=n[1]))
                except Exception as exc:
                    sweep[name], errors[name] = None, f"{type(exc).__name__}: {str(exc)[:300]}"
                    continue
                head_rows = (k_out[:4096].clone(), v_out[:4096].clone())
                if first is None:
                    first = head_rows
                diff = max((head_rows[0].float() - first[0].float()).abs().max().item(),
                           (head_rows[1].float() - first[1].float()).abs().max().item())
                same = (torch.equal(head_rows[0].view(torch.int16), first[0].view(torch.int16))
                        and torch.equal(head_rows[1].view(torch.int16), first[1].view(torch.int16)))
                share = float(torch.cat([(head_rows[i].view(torch.int16) != first[i].view(torch.int16)).flatten()
                                         for i in (0, 1)]).float().mean())
                agreement[name] = dict(bit_identical=same, max_abs_diff=diff, share_differing=share)
                sweep[name], err = _timed(lambda c=c: gather_kv_b_proj_with_config(*op_args, config=c), bench)
                if err:
                    errors[name] = err
            default = time_gpu(in_mode("assert", lambda: gather_kv_b_proj(*op_args)), trials=args.trials)
            ratio = time_ratio(in_mode("assert", lambda: gather_kv_b_proj(*op_args)),
                               in_mode("record", lambda: gather_kv_b_proj(*op_args)), trials=15)
            if (t, heads) not in gemms:
                gemms[(t, heads)] = op_shape_gemm(t, heads, lambda fn: time_gpu(fn, trials=args.trials).ms)
            torch_ms, _ = _timed(lambda: torch_path(p, k_out, v_out), bench)
            serial_ms = None
            if not args.skip_serial:
                serial_ms, _ = _timed(lambda: serial_loop(p, k_out, v_out), bench)
            flops, nbytes = traffic(t, heads, cache, weight)
            row = dict(shape=label, batch=batch, ctx=ctx, heads=heads, cache=cache, weight=weight,
                       page_size=page_size, tokens=t, flops=flops, bytes=nbytes, torch_ms=torch_ms,
                       serial_ms=serial_ms, default_ms=default.ms, default_spread=default.spread(),
                       unchecked_ms=ratio.b.ms, checked_ratio=ratio.median, checked_ratio_spread=ratio.spread(),
                       gemm=gemms[(t, heads)], sweep=sweep, errors=errors, agreement_with_first=agreement)
            results["rows"].append(row)
            Path(args.json).write_text(json.dumps(results, indent=1))  # partial results survive a timeout
            timed = {k: v for k, v in sweep.items() if v}
            best = min(timed, key=timed.get) if timed else None
            print(f"{label:14s} {cache:4s}x{weight:4s} S={page_size:<3d} torch {torch_ms}  serial "
                  f"{serial_ms if serial_ms is None else round(serial_ms, 4)}  best {best} "
                  f"{timed.get(best, float('nan')):.4f}  | "
                  + "  ".join("fail" if v is None else f"{v:.4f}" for v in sweep.values()), flush=True)
            del p, k_out, v_out
            torch.cuda.empty_cache()
    return results


def limiters(args):
    """The op's configuration at 1x32000 h12 against itself with one stage left
    out or changed: no stores (the epilogue's memory traffic), warp
    specialization of the K loop, four pipeline stages, a persistent grid,
    pointer loads and stores instead of TMA boxes.
    Printed as a markdown table (and saved in the JSON)."""
    from dataclasses import replace

    from _timing import time_gpu

    from portq_kernels import validation
    from portq_kernels.mla_prefix.gather_kv_b_proj import (GPU_FP8_TMA_CONFIG, GPU_TMA_CONFIG,
                                                           gather_kv_b_proj_with_config)

    lines = ["| cache x weight | S | variant | ms | min–max µs | TFLOP/s |", "|---|---|---|---:|---:|---:|"]
    for cache, weight, page_size in (("bf16", "bf16", 64), ("fp8", "bf16", 64), ("fp8", "fp8", 1)):
        p = make_problem(1, 32000, 12, cache, page_size, "cuda", weight)
        k_out = torch.empty(32000, 12, NOPE + ROPE, device="cuda", dtype=torch.bfloat16)
        v_out = torch.empty(32000, 12, VDIM, device="cuda", dtype=torch.bfloat16)
        op_args = (p["k_buffer"], p["k_scale"], p["kv_indptr"], p["kv_indices"], p["cu"], p["weight"], None,
                   k_out, v_out)
        # The base is one program per tile with TMA boxes (the default before the
        # persistent grid), so that each persistent variant is a row of its own.
        base = GPU_FP8_TMA_CONFIG if cache == weight == "fp8" else GPU_TMA_CONFIG
        flops, _ = traffic(32000, 12, cache, weight)
        for label, config in (("one program per tile, TMA boxes (`" + base.name + "`)", base),
                              ("no stores (epilogue traffic left out)", replace(base, write_outputs=False)),
                              ("K loop warp-specialized", replace(base, warp_specialize=True)),
                              ("4 pipeline stages", replace(base, num_stages=4)),
                              ("persistent grid, 1 program per SM", replace(base, grid_stride=True, programs_per_sm=1)),
                              ("persistent grid, 2 programs per SM", replace(base, grid_stride=True, programs_per_sm=2)),
                              ("persistent grid, 1 per SM, tile and K loops flattened",
                               replace(base, grid_stride=True, programs_per_sm=1, flatten=True)),
                              ("persistent grid, 2 per SM, tile and K loops flattened",
                               replace(base, grid_stride=True, programs_per_sm=2, flatten=True)),
                              ("persistent grid, flattened, no stores",
                               replace(base, grid_stride=True, programs_per_sm=1, flatten=True,
                                       write_outputs=False)),
                              ("pointer loads and stores (no TMA)", replace(base, weight_tma=False, store_tma=False)),
                              ("TMA weight loads only", replace(base, store_tma=False))):
            def call(config=config):
                with validation.index_checks("record"):
                    gather_kv_b_proj_with_config(*op_args, config=config)
            try:
                t = time_gpu(call, trials=args.trials)
            except Exception as exc:  # a variant Triton cannot compile here is reported, not fatal
                torch.cuda.synchronize()
                lines.append(f"| {cache} x {weight} | {page_size} | {label} | fail | "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]} | |")
                continue
            lines.append(f"| {cache} x {weight} | {page_size} | {label} | {t.ms:.4f} | {t.spread()} | "
                         f"{flops / t.ms / 1e9:.0f} |")
            print(lines[-1], flush=True)
        del p, k_out, v_out
        torch.cuda.empty_cache()
    gemm = op_shape_gemm(32000, 12, lambda fn: time_gpu(fn, trials=args.trials).ms)
    flops, _ = traffic(32000, 12, "bf16")
    for kind in ("bf16", "fp8"):
        ms = gemm[f"{kind}_ms"]
        if ms:
            lines.append(f"| bare GEMM 32000 x 512 x 3072, {kind} operands | | `torch."
                         + ("matmul" if kind == "bf16" else "_scaled_mm") + f"` | {ms:.4f} | | {flops / ms / 1e9:.0f} |")
            print(lines[-1], flush=True)
    return lines


# ------------------------------------------------------------------ report

def gemm_ms(r):
    """The bare GEMM of the row's own shape measured in the same run: bf16
    operands, or the faster of fp8 and bf16 where cache and weight are both
    fp8 (fp8 x fp8 operands are possible there)."""
    gemm = r.get("gemm")
    if not gemm:
        return None
    if r["cache"] == "fp8" and r.get("weight", "bf16") == "fp8" and gemm.get("fp8_ms"):
        return min(gemm["fp8_ms"], gemm["bf16_ms"])
    return gemm["bf16_ms"]


def roofline_ms(r, ceil):
    """max(the same-shape GEMM, bytes / copy bandwidth); runs saved before the
    same-shape GEMM was measured fall back to the 8192^3 matmul rate."""
    gemm = gemm_ms(r)
    if gemm is None:
        fp8 = r["cache"] == "fp8" and r.get("weight", "bf16") == "fp8" and ceil.get("fp8_tflops")
        gemm = r["flops"] / ((ceil["fp8_tflops"] if fp8 else ceil["bf16_tflops"]) * 1e9)
    return max(gemm, r["bytes"] / (ceil["copy_tbs"] * 1e9))


def _fmt(ms):
    return "fail" if ms is None else f"{ms:.4f}"


def _best(r):
    timed = {k: v for k, v in r["sweep"].items() if v}
    if not timed:
        return "n/a"
    name = min(timed, key=timed.get)
    return f"{timed[name]:.4f} (`{name}`)"


def render(results) -> str:
    ceil = results["ceilings"]
    lines = [
        "# gather_kv_b_proj (MLA cached-prefix expansion) on " + results["device"],
        "",
        f"Reproduce: `{COMMAND}` (torch {results['torch']}, Triton {results['triton']}).",
        "",
        f"Measured in the same run: device copy {ceil['copy_tbs']:.2f} TB/s (read+write, eager `copy_` loop); "
        f"for reference, square 8192^3 matmuls at {ceil['bf16_tflops']:.0f} TFLOP/s (bf16) and "
        + (f"{ceil['fp8_tflops']:.0f}" if ceil.get("fp8_tflops") else "n/a") + " TFLOP/s (fp8 `_scaled_mm`). "
        "The ceiling each row is held to is not that square GEMM but a bare GEMM of the op's own shape, "
        "`[tokens, 512] x [512, heads*(Dn+Dv)]` into bf16, timed the same way as the op (`GEMM ms`): "
        "`torch.matmul` with bf16 operands, or the faster of that and `torch._scaled_mm` with fp8 operands "
        "where cache and weight are both fp8.",
        "",
        "`ours` is the op's default wrapper with the launch configuration it picks for the row's dtypes "
        "(`config`; a bad index traps in the kernel, no host read). R=512, E=64, Dn=Dv=128, weight without "
        "scale. `ours ÷ GEMM` = our time over the same-shape GEMM's (1.00 would be a GEMM that also gathers "
        "its rows and splits its output for free); `%roof` = max(GEMM, bytes / copy bandwidth) / our time. "
        "`torch` = gather + `torch.matmul` + copies (slot index and bf16 weight precomputed), timed with the "
        "same method as ours; `serial` = upstream's pre-#4776 (sequence, head) serial chunk-loop geometry. "
        "`default ÷ unchecked` is the default wrapper over the same op in index mode `record`, timed "
        "interleaved in one loop (15 trials, each replaying one graph of each, the order alternating; median "
        "of the per-trial ratios, slowest–fastest beside it). Times are per launch: CUDA-graph replay of "
        "back-to-back launches (about 3 ms, at least 5) after an L2 flush, median of 7 trials, "
        "fastest–slowest beside it (`benchmarks/_timing.py`).",
        "",
        *([results["ours_note"], ""] if results.get("ours_note") else []),
        "| shape (BxL heads) | cache x weight | S | tokens | config | ours ms | min–max µs | TB/s | TFLOP/s "
        "| GEMM ms | ours ÷ GEMM | %roof | torch ms | x torch | serial ms | x serial | best swept ms | "
        "default ÷ unchecked (spread) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        weight = r.get("weight", "bf16")
        chosen = op_config_name(r["cache"], weight)
        ours = r.get("default_ms", r["sweep"].get(chosen))
        roof = roofline_ms(r, ceil)
        gemm = gemm_ms(r)
        serial = r["serial_ms"]
        if ours is None:
            perf = "fail | n/a | n/a | n/a"
        else:
            perf = (f"{ours:.4f} | {r.get('default_spread', 'n/a')} | {r['bytes'] / ours / 1e9:.2f} | "
                    f"{r['flops'] / ours / 1e9:.0f}")
        if r.get("checked_ratio"):
            checked = f"{r['checked_ratio']:.3f}× ({r['checked_ratio_spread']})"
        elif ours and r.get("unchecked_ms"):
            checked = f"{ours / r['unchecked_ms']:.3f}×"
        else:
            checked = "n/a"
        lines.append(
            f"| {r['shape']} | {r['cache']} x {weight} | {r['page_size']} | {r['tokens']} | `{chosen}` | {perf} | "
            + (f"{gemm:.4f} | {ours / gemm:.2f}" if gemm and ours else "n/a | n/a") + " | "
            + (f"{100 * roof / ours:.0f}%" if ours else "n/a") + " | "
            f"{_fmt(r['torch_ms'])} | " + (f"{r['torch_ms'] / ours:.2f}" if ours and r["torch_ms"] else "n/a")
            + " | " + (f"{serial:.4f} | {serial / ours:.2f}" if serial and ours else "n/a | n/a")
            + " | " + _best(r) + " | " + checked + " |")
    lines += ["", NOTES, "", "Tile configurations swept (median ms per shape; `fail` = did not compile or run; "
              "`—` = not timed for these dtypes, see `relevant()`):", "",
              "| shape | cache x weight | S | " + " | ".join(results["configs"]) + " |",
              "|---|---|---|" + "---|" * len(results["configs"])]
    for r in results["rows"]:
        cells = []
        for c in results["configs"]:
            if c not in r["sweep"]:
                cells.append("—")
            else:
                cells.append(_fmt(r["sweep"][c]))
        lines.append(f"| {r['shape']} | {r['cache']} x {r.get('weight', 'bf16')} | {r['page_size']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


NOTES = (
    "Notes. The default launch is a persistent grid over the TMA tiles with the tile loop and the K "
    "loop flattened into one software-pipelined loop (`persistent1 flat`: one program per SM for the "
    "128x256 bf16-operand tile; `persistent2 flat` for the 64x128 fp8 x fp8 tile), bit-identical to one "
    "program per tile (the GPU tests compare every candidate bit for bit). It was chosen from a sweep "
    "on an NVIDIA H200 (torch 2.11.0+cu130, Triton 3.6.0, same command; the sweep below is this run's): against one program per "
    "tile with TMA boxes (`T128xN256xK64 g32 w8s3 tmaW tmaKV`) it was 1.2-5.5% faster on 23 of the 24 "
    "bf16-operand rows and level (+0.3%) on the last; one program per SM without the flattening lost 3% "
    "on one row; for fp8 x fp8 two programs per SM were 9-11% faster (three: 18-33% slower; one: 50% "
    "slower).\n\n"
    "What limits it: `reports/benchmarks/gather_kv_b_proj_limiters.md` (`--limiters`: the op at 1x32000 "
    "h12 with one stage left out or changed, against a bare GEMM of the same shape, side by side in one "
    "run, with the card it ran on and what the figures say)."
)

def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ceil = results["ceilings"]
    rows = results["rows"]
    labels = [f"{r['shape']}\n{r['cache']}x{r.get('weight', 'bf16')} S{r['page_size']}" for r in rows]
    ours = [r.get("default_ms", r["sweep"].get(op_config_name(r["cache"], r.get("weight", "bf16")))) for r in rows]
    roof = [roofline_ms(r, ceil) for r in rows]
    fig, ax = plt.subplots(figsize=(max(10, len(rows) * 0.55), 5.5))
    x = range(len(rows))
    ax.plot(x, [o / f if o else float("nan") for o, f in zip(ours, roof)], "o-", label="ours")
    ax.plot(x, [r["torch_ms"] / f if r["torch_ms"] else float("nan") for r, f in zip(rows, roof)], "s-",
            label="PyTorch path")
    ax.plot(x, [r["serial_ms"] / f if r["serial_ms"] else float("nan") for r, f in zip(rows, roof)], "^-",
            label="serial loop (upstream geometry)")
    ax.axhline(1 / 0.7, color="grey", ls="--", lw=0.8, label="70% of roofline")
    ax.set_yscale("log")
    ax.set_ylabel("time / roofline time (lower is better)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_title(f"gather_kv_b_proj on {results['device']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def limiters_report(table: str) -> str:
    """The ``--limiters`` table with the card, the versions and the command."""
    import triton

    return (f"# gather_kv_b_proj: what limits it, on {torch.cuda.get_device_name()}\n\n"
            f"Reproduce: `python benchmarks/bench_gather_kv_b_proj.py --limiters` (torch {torch.__version__}, "
            f"Triton {triton.__version__}). 1x32000 tokens, 12 heads, R=512, E=64, Dn=Dv=128; each row is the "
            "op's kernel with one stage left out or changed, index mode `record`, timed as the main table is "
            "(CUDA-graph replay after an L2 flush, median of the trials, fastest–slowest beside it); the base "
            "of each group is one program per tile with TMA boxes. The last two rows are the bare GEMM of the "
            "op's own shape, timed the same way.\n\n" + table + "\n\n" + LIMITERS_READING + "\n")


LIMITERS_READING = (
    "Reading (written for the run in this file). The default configurations are the flattened "
    "persistent rows: bf16 x bf16 and fp8 x bf16 one program per SM, fp8 x fp8 two. With bf16 "
    "operands the flattened loop with every store masked off takes 1.25x the same-shape GEMM: the "
    "latent rows are gathered through pointer loads (Hopper's TMA has no row gather; page sizes 1 "
    "and 64 run the same time) and one 8-step K loop per 128x256 tile, one resident program per SM "
    "(237-255 registers), keeps the main loop short of the GEMM's; the stores add 18% more. An fp8 "
    "cache with a bf16 weight adds the register upcast of every latent tile and keeps pointer weight "
    "loads (Triton 3.6 computed wrong K columns with a TMA weight there). For fp8 x fp8, two "
    "programs per SM hide most of the epilogue (flattened, with stores, within 2% of one program "
    "per tile without stores): what is left is the 64x128 main loop at about half the fp8 GEMM's "
    "rate, the tile bounded by the second accumulator the fp32 promotion keeps (128x256 spills). "
    "Warp specialization of the K loop and four stages are level or slower. Reaching the issue's "
    "targets (0.19 / 0.23 / 0.15 ms on an H200) needs a main loop at the GEMM's rate: a row-gather "
    "copy engine (Blackwell's TMA gather4) or a warp-specialized producer that gathers rows into "
    "shared memory ahead of the MMA warps, which Triton 3.6 does not express."
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from-json", help="re-render a saved run instead of measuring")
    parser.add_argument("--json", default=os.environ.get("OUT", ".") + "/gather_kv_b_proj.json",
                        help="where to save the raw measurements")
    parser.add_argument("--only", help="run shapes whose label contains this string")
    parser.add_argument("--explore", action="store_true",
                        help="also sweep tile variants the op does not use (printed and saved only)")
    parser.add_argument("--trials", type=int, default=7)
    parser.add_argument("--skip-serial", action="store_true")
    parser.add_argument("--no-warm", action="store_true", help="skip the parallel warm-up compile")
    parser.add_argument("--profile", action="store_true",
                        help="one launch of the op per row, nothing timed or written (for ncu)")
    parser.add_argument("--limiters", action="store_true",
                        help="only time the leave-one-stage-out variants at 1x32000 h12 (printed)")
    parser.add_argument("--compile-only", action="store_true", help="only warm Triton's cache, then exit")
    args = parser.parse_args(argv)
    if args.explore:  # read by sweep_configs, also in the warm-up workers
        os.environ["GATHER_KV_B_PROJ_EXPLORE"] = "1"
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
    else:
        if not torch.cuda.is_available():
            sys.exit("bench_gather_kv_b_proj: needs a CUDA device (or --from-json)")
        if args.limiters:
            table = "\n".join(limiters(args))
            LIMITERS_MD.write_text(limiters_report(table))
            print(table)
            return
        results = run(args)
        if results is None:
            return
        Path(args.json).write_text(json.dumps(results, indent=1))
    table = render(results)
    REPORT_MD.parent.mkdir(parents=True, exist_ok=True)
    REPORT_MD.write_text(table)
    plot(results, REPORT_PNG)
    print(table)


if __name__ == "__main__":
    main()
