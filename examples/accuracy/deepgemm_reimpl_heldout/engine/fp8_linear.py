"""The engine's FP8 linear layers: activations quantised per token and per
128 channels, weights stored quantised per 128x128 block. The dense layer
calls the normal GEMM; the MoE experts pad each expert's tokens to the
grouped layout's alignment and call the contiguous grouped GEMM. Owns no
kernels."""

import torch

from fp8gemm.gemm import gemm_fp8_fp8_bf16_nt, m_grouped_gemm_fp8_fp8_bf16_nt_contiguous
from fp8gemm.utils import ceil_div, m_alignment_for_contiguous_layout

FP8_MAX = 448.0


def quantize_tokens(x):
    """x (M, K), K a multiple of 128 -> fp8 codes and (M, K/128) scales."""
    m, k = x.shape
    blocks = x.float().view(m, k // 128, 128)
    amax = blocks.abs().amax(dim=-1).clamp(min=1e-4)
    codes = (blocks * (FP8_MAX / amax[..., None])).to(torch.float8_e4m3fn)
    return codes.view(m, k), amax / FP8_MAX


def quantize_weight(w):
    """w (N, K) -> fp8 codes and (N/128, K/128) block scales."""
    n, k = w.shape
    pn, pk = ceil_div(n, 128) * 128, ceil_div(k, 128) * 128
    padded = torch.zeros((pn, pk), dtype=torch.float32, device=w.device)
    padded[:n, :k] = w.float()
    blocks = padded.view(pn // 128, 128, pk // 128, 128)
    amax = blocks.abs().amax(dim=(1, 3)).clamp(min=1e-4)
    codes = (blocks * (FP8_MAX / amax[:, None, :, None])).to(torch.float8_e4m3fn)
    return codes.view(pn, pk)[:n, :k].contiguous(), amax / FP8_MAX


def dense_fp8_linear(x, weight):
    """x (M, K) bf16, weight (fp8 (N, K), scales) -> (M, N) bf16."""
    out = torch.empty((x.shape[0], weight[0].shape[0]), dtype=torch.bfloat16, device=x.device)
    gemm_fp8_fp8_bf16_nt(quantize_tokens(x), weight, out)
    return out


def moe_fp8_experts(x, expert_of_token, weights):
    """x (T, K) bf16, expert_of_token (T,) int, weights (fp8 (E, N, K),
    scales (E, N/128, K/128)) -> (T, N) bf16, each token through its expert."""
    align = m_alignment_for_contiguous_layout()
    num_experts = weights[0].shape[0]
    rows, indices = [], []
    for e in range(num_experts):
        take = (expert_of_token == e).nonzero().flatten()
        padded = ceil_div(take.numel(), align) * align
        rows.append(torch.cat([take, torch.full((padded - take.numel(),), -1, device=x.device, dtype=take.dtype)]))
        indices.append(torch.full((padded,), e, dtype=torch.int32, device=x.device))
    order = torch.cat(rows)
    m_indices = torch.cat(indices)
    packed = torch.zeros((order.numel(), x.shape[1]), dtype=x.dtype, device=x.device)
    valid = order >= 0
    packed[valid] = x[order[valid]]
    out = torch.empty((order.numel(), weights[0].shape[1]), dtype=torch.bfloat16, device=x.device)
    m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(quantize_tokens(packed), weights, out, m_indices)
    result = torch.empty((x.shape[0], out.shape[1]), dtype=torch.bfloat16, device=x.device)
    result[order[valid]] = out[valid]
    return result
