"""Input builders and the comparison rule shared by the gather_kv_b_proj tests.

The comparison rule (``assert_matches_reference``):

* rows the op must not write keep the sentinel, byte for byte;
* the rope part of K is bit-exact against ``(k_pe * k_scale)`` rounded to
  nearest-even bf16 (one fp32 multiply in both);
* K_nope and V are compared with the unrounded fp32 reference. The kernel's
  fp32 value differs from it only by accumulation order, at most
  ``2**-16 * sum|x_k * w_k * s|`` for K = 512 (a deliberately loose bound on
  fp32 reassociation error, about 500x its typical size), and then is rounded
  once to bf16 (half an ulp). So every element must satisfy
  ``|out - ref| <= ulp/2 + 2**-16 * magnitude``, which is at most one bf16
  ulp of the result unless the sum cancels catastrophically; and at most 2% of
  the elements may differ at all from the reference rounded to bf16
  (measured: well under 0.1%).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from portq_kernels.mla_prefix import reference

RANK = 512
ROPE = 64
SENTINEL = 3.25


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@dataclass
class Case:
    k_buffer: torch.Tensor
    k_scale: torch.Tensor | None
    kv_indptr: torch.Tensor
    kv_indices: torch.Tensor
    cu: torch.Tensor
    weight: torch.Tensor
    scale: torch.Tensor | None
    k_prefix: torch.Tensor
    v_prefix: torch.Tensor

    def args(self):
        return (self.k_buffer, self.k_scale, self.kv_indptr, self.kv_indices, self.cu,
                self.weight, self.scale, self.k_prefix, self.v_prefix)

    def fresh_outputs(self):
        """New sentinel-filled outputs of the same shape (for a second run)."""
        return (torch.full_like(self.k_prefix, SENTINEL), torch.full_like(self.v_prefix, SENTINEL))


def make_case(ctx_lens, *, page_size=16, heads=2, nope=128, v=128, cache_dtype=torch.bfloat16,
              weight_dtype=torch.bfloat16, scale_mode="none", extra_rows=3, seed=0,
              spare_pages=3, indices_slack=5, dev=None) -> Case:
    """A ragged batch with shuffled distinct pages, a kv_indices buffer with a
    junk tail, and outputs ``extra_rows`` longer than the valid tokens, filled
    with a sentinel. ``scale_mode``: none | row | row2d | row_bf16 | block."""
    dev = dev or device()
    gen = torch.Generator().manual_seed(seed)
    ctx = torch.tensor(ctx_lens, dtype=torch.int64)
    pages = (ctx + page_size - 1) // page_size
    num_pages = int(pages.sum()) + spare_pages
    perm = torch.randperm(num_pages, generator=gen)[: int(pages.sum())]
    junk = torch.full((indices_slack,), -7, dtype=torch.int64)
    kv_indices = torch.cat([perm, junk]).to(torch.int32)
    kv_indptr = torch.cat([torch.zeros(1, dtype=torch.int64), pages.cumsum(0)]).to(torch.int32)
    cu = torch.cat([torch.zeros(1, dtype=torch.int64), ctx.cumsum(0)]).to(torch.int32)

    k_buffer = (torch.randn(num_pages, page_size, RANK + ROPE, generator=gen) * 2).to(cache_dtype)
    # A bf16 cache must ignore k_scale: give it a value that would show.
    k_scale = torch.tensor([0.4375 if cache_dtype != torch.bfloat16 else 5.0])
    n_rows = heads * (nope + v)
    if weight_dtype == torch.bfloat16:
        weight = (torch.randn(n_rows, RANK, generator=gen) * 0.05).to(weight_dtype)
    else:
        weight = torch.randn(n_rows, RANK, generator=gen).to(weight_dtype)
    scale = None
    if scale_mode in ("row", "row2d", "row_bf16"):
        scale = torch.rand(n_rows, generator=gen) * 0.1 + 0.01
        if scale_mode == "row2d":
            scale = scale[:, None].contiguous()
        if scale_mode == "row_bf16":
            scale = scale.to(torch.bfloat16)
    elif scale_mode == "block":
        scale = torch.rand((n_rows + 127) // 128, RANK // 128, generator=gen) * 0.1 + 0.01
    total = int(ctx.sum()) + extra_rows
    k_prefix = torch.full((total, heads, nope + ROPE), SENTINEL, dtype=torch.bfloat16)
    v_prefix = torch.full((total, heads, v), SENTINEL, dtype=torch.bfloat16)
    to = lambda t: None if t is None else t.to(dev)  # noqa: E731
    return Case(to(k_buffer), to(k_scale), to(kv_indptr), to(kv_indices), to(cu), to(weight),
                to(scale), to(k_prefix), to(v_prefix))


def bf16_ulp(x: torch.Tensor) -> torch.Tensor:
    """Spacing of bf16 values at |x| (fp32 tensor in, fp32 out)."""
    _, exponent = torch.frexp(x.abs())
    return torch.ldexp(torch.ones_like(x), (exponent - 8).clamp(min=-133))


EXACT_PRODUCTS = (2.0**-16, 0.02)
"""(accumulation bound factor, share of elements allowed off the rounded
reference) for exact operands accumulated in fp32 (every default path)."""
def fp8_mma_accuracy(promote_k: int = 32):
    """The same for fp8 x fp8 tensor-core operands (``TileConfig.fp8_dot``):
    the products are exact, but Hopper's fp8 MMA adds products at reduced
    precision (about 13 fraction bits relative to the largest term, per
    published measurements) until the partial sum is promoted into fp32
    every ``promote_k`` values of K, so the error bound is
    ``promote_k * 2^-14 * sum|x*w*s|`` (``promote_k`` terms times 2^-13 at
    most, halved for rounding): 2^-9 for a promotion after every
    instruction (32), 2^-7 for one per 128-wide K step."""
    return (promote_k * 2.0**-14, 0.5)


FP8_MMA = fp8_mma_accuracy(32)


def assert_projection_close(out: torch.Tensor, ref: torch.Tensor, magnitude: torch.Tensor, what: str,
                            accuracy=EXACT_PRODUCTS):
    factor, share = accuracy
    out32 = out.float()
    ulp = bf16_ulp(torch.maximum(ref.abs(), out32.abs()))
    bound = 0.5 * ulp + magnitude * factor
    err = (out32 - ref).abs()
    bad = ~(err <= bound)
    assert not bool(bad.any()), (
        f"{what}: {int(bad.sum())} of {err.numel()} elements exceed ulp/2 + {factor:g}*|sum|; "
        f"worst err {float(err.max()):.4g}")
    rounded = ref.to(torch.bfloat16)
    differ = float((out.view(torch.int16) != rounded.view(torch.int16)).float().mean()) if out.numel() else 0.0
    assert differ <= share, f"{what}: {differ:.2%} of elements differ from the rounded reference"


def default_accuracy(case: Case):
    """The bound for the configuration the public op picks for ``case``."""
    from portq_kernels.mla_prefix.gather_kv_b_proj import default_config

    scale = case.scale
    mode = "none" if scale is None else ("row" if scale.dim() == 1 or scale.shape[1] == 1 else "block")
    config = default_config(case.k_buffer.device, mode, case.k_buffer.dtype, case.weight.dtype)
    fp8 = case.k_buffer.dtype == case.weight.dtype == torch.float8_e4m3fn
    if config.fp8_dot and fp8 and case.k_buffer.is_cuda:
        return fp8_mma_accuracy(config.fp8_promote_k)
    return EXACT_PRODUCTS


def assert_matches_reference(case: Case, k_out: torch.Tensor, v_out: torch.Tensor, accuracy=None):
    """``accuracy`` defaults to the bound of the op's own configuration."""
    accuracy = accuracy or default_accuracy(case)
    heads, v_dim = v_out.shape[1], v_out.shape[2]
    proj = reference.project_prefix(case.k_buffer, case.k_scale, case.kv_indptr, case.kv_indices,
                                    case.cu, case.weight, case.scale, heads)
    rows = proj.rows.to(k_out.device)
    nope = proj.kv.shape[2] - v_dim
    written = torch.zeros(k_out.shape[0], dtype=torch.bool, device=k_out.device)
    written[rows] = True
    sentinel = torch.tensor(SENTINEL, dtype=torch.bfloat16, device=k_out.device).view(torch.int16)
    assert bool((k_out[~written].view(torch.int16) == sentinel).all()), "k_prefix: unwritten rows changed"
    assert bool((v_out[~written].view(torch.int16) == sentinel).all()), "v_prefix: unwritten rows changed"
    rope = proj.rope.to(torch.bfloat16)[:, None, :].expand(-1, heads, -1)
    assert torch.equal(k_out[rows, :, nope:].view(torch.int16), rope.view(torch.int16)), \
        "rope part of k_prefix is not bit-exact"
    assert_projection_close(k_out[rows, :, :nope], proj.kv[..., :nope], proj.kv_magnitude[..., :nope],
                            "k_prefix[..., :Dn]", accuracy)
    assert_projection_close(v_out[rows], proj.kv[..., nope:], proj.kv_magnitude[..., nope:], "v_prefix",
                            accuracy)


def assert_bit_identical(a: torch.Tensor, b: torch.Tensor, what: str):
    assert torch.equal(a.view(torch.int16), b.view(torch.int16)), f"{what}: outputs differ"
