"""Decoder step of the engine: the MLP's norm, the KV-cache write of a prefill
chunk and the top-p cut of the sampler, run by TurboMind's vendored CUDA
kernels through the engine_tm torch ops (csrc/tm_ops.cu); the SiLU gate stays
in torch."""

import torch


def mlp_norm_and_gate(x, norm_weight, gate, up, eps=1e-6):
    """x (tokens, hidden) fp16 -> (RMSNorm(x), silu(gate) * up); the gate stays in torch."""
    normed = torch.empty_like(x)
    torch.ops.engine_tm.rms_norm(normed, x, norm_weight, eps)
    return normed, torch.nn.functional.silu(gate) * up


def write_prefill_kv(cache, k, v, cu_q_len, cu_k_len, rope_base, layer_id, max_q_len):
    """Rotates k by RoPE and writes k, v of every packed token into the paged cache."""
    torch.ops.engine_tm.write_kv_cache(
        cache.block_ptrs, k, v, cu_q_len, cu_k_len, cache.cu_block_num, rope_base,
        k.shape[-1], cache.block_seq_len, layer_id, max_q_len, 0,
    )


def top_p_candidates(probs, vocab_size, top_ps, min_ps):
    """Sorted candidates of each row kept by top-p and min-p, and how many each row keeps."""
    batch = probs.shape[0]
    sorted_probs = torch.empty_like(probs)
    sorted_ids = torch.empty(probs.shape, dtype=torch.int32, device=probs.device)
    kept = torch.full((batch,), vocab_size, dtype=torch.int32, device=probs.device)
    top_ks = torch.zeros(batch, dtype=torch.int32, device=probs.device)
    torch.ops.engine_tm.top_p_filter(probs, sorted_probs, sorted_ids, kept, top_ks, top_ps, min_ps, vocab_size)
    return sorted_probs, sorted_ids, kept
