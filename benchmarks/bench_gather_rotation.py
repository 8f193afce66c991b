"""The 60K-token gathers with their working set rotated out of L2.

A 60K-token gather moves 70-110 MB, within about twice the L2 of an H100/H200
(50-60 MB), so back-to-back launches over one buffer set partly run from L2.
This script times each gather cycling over enough buffer sets (each launch
reads a source and writes a destination no launch touched since the set was
last used, about 1 GB apart) beside a copy of the same bytes rotated the same
way, and prints both with their ratio. Two copies of the same bytes: PyTorch's
``copy_``, and the plain Triton copy kernel of ``bench_kv_cache.py`` (one load
and one store per word), the denominator of that script's "copy, same bytes". One CUDA graph of 2 x SETS launches per
trial, median of the trials (CUDA events), GPU only.

    python benchmarks/bench_gather_rotation.py
"""
from __future__ import annotations

import _bootstrap  # noqa: F401

import argparse
import statistics

import torch
import triton
from bench_kv_cache import flat_copy_kernel

from portq_kernels import kv_cache as ops
from portq_kernels import validation

BLOCK, TOKENS = 64, 60000


def _graph_us(launches, trials):
    for launch in launches:
        launch()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for launch in launches:
            launch()
    times = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000 / len(launches))
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=12)
    parser.add_argument("--trials", type=int, default=9)
    args = parser.parse_args()
    dev = torch.device("cuda")
    blocks = TOKENS // BLOCK + 2
    table = torch.randperm(blocks, device=dev).to(torch.int32)[None, :]
    cu = torch.tensor([0, TOKENS], dtype=torch.int32, device=dev)
    starts = torch.tensor([13], dtype=torch.int32, device=dev)
    scale = torch.tensor([0.5], device=dev)
    cases = {
        "cp_gather_cache (fp8 bytes)": (576, torch.uint8, 1,
            lambda s, d: ops.cp_gather_cache(s, d, table, cu, 1, starts)),
        "gather_and_maybe_dequant_cache (fp8->bf16)": (576, torch.bfloat16, 2,
            lambda s, d: ops.gather_and_maybe_dequant_cache(s, d, table, cu, TOKENS, "fp8", scale, starts)),
        "cp_gather_and_upconvert_fp8_kv_cache": (656, torch.bfloat16, 2,
            lambda s, d: ops.cp_gather_and_upconvert_fp8_kv_cache(s, d, table, cu[:1], 1, starts)),
        "cp_gather_and_upconvert_nvfp4_kv_cache": (352, torch.bfloat16, 2,
            lambda s, d: ops.cp_gather_and_upconvert_nvfp4_kv_cache(s, d, table, cu[:1], 1, starts)),
    }
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, {args.sets} buffer sets, "
          f"median of {args.trials} graph replays of {2 * args.sets} launches")
    print("| op | MB moved | rotated µs | `copy_`, same bytes, rotated µs | % of `copy_` | copy kernel, rotated µs "
          "| % of copy kernel | one set µs | `copy_` one set µs | % of `copy_` | copy kernel one set µs "
          "| % of copy kernel |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (entry, dst_dtype, dst_bytes, call) in cases.items():
        srcs = [torch.randint(0, 0x78, (blocks, BLOCK, entry), dtype=torch.uint8, device=dev)
                for _ in range(args.sets)]
        dsts = [torch.empty(TOKENS, 576, dtype=dst_dtype, device=dev) for _ in range(args.sets)]
        moved = TOKENS * (entry + 576 * dst_bytes)
        copy_src = [torch.randint(0, 100, (moved // 2,), dtype=torch.uint8, device=dev) for _ in range(args.sets)]
        copy_dst = [torch.empty(moved // 2, dtype=torch.uint8, device=dev) for _ in range(args.sets)]
        op_rot = [(lambda s=s, d=d: call(s, d)) for s, d in zip(srcs, dsts)] * 2
        copy_rot = [(lambda s=s, d=d: d.copy_(s)) for s, d in zip(copy_src, copy_dst)] * 2
        words = moved // 8
        grid = (triton.cdiv(words, 4096),)

        def kernel_copy(s, d):
            flat_copy_kernel[grid](s.view(torch.int32), d.view(torch.int32), words, BLOCK=4096, num_warps=8)
        kernel_rot = [(lambda s=s, d=d: kernel_copy(s, d)) for s, d in zip(copy_src, copy_dst)] * 2
        op_one = [lambda: call(srcs[0], dsts[0])] * (2 * args.sets)
        copy_one = [lambda: copy_dst[0].copy_(copy_src[0])] * (2 * args.sets)
        kernel_one = [lambda: kernel_copy(copy_src[0], copy_dst[0])] * (2 * args.sets)
        rot, copy_r, kernel_r = (_graph_us(x, args.trials)[0] for x in (op_rot, copy_rot, kernel_rot))
        one, copy_o, kernel_o = (_graph_us(x, args.trials)[0] for x in (op_one, copy_one, kernel_one))
        print(f"| {name} | {moved / 1e6:.0f} | {rot:.1f} | {copy_r:.1f} | {100 * copy_r / rot:.0f}% | "
              f"{kernel_r:.1f} | {100 * kernel_r / rot:.0f}% | {one:.1f} | {copy_o:.1f} | {100 * copy_o / one:.0f}% | "
              f"{kernel_o:.1f} | {100 * kernel_o / one:.0f}% |")
        del srcs, dsts, copy_src, copy_dst
        torch.cuda.empty_cache()
    assert int(validation.index_flag(dev)[0]) == 1


if __name__ == "__main__":
    main()
