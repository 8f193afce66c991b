"""The engine's decoder layer and sampler steps over its CUDA kernels
(csrc/, registered as torch.ops.dec_ops): RMSNorm, the SiLU-gated MLP, the
paged KV-cache write of a prefill chunk, and top-p candidate selection."""

import torch


def mlp(x, norm_weight, gate_up_weight, down_weight, eps=1e-6):
    """x (tokens, hidden) -> down(silu(gate(norm(x))) * up(norm(x)))."""
    normed = torch.empty_like(x)
    torch.ops.dec_ops.launch_rms_norm(normed, x, norm_weight, eps)
    gate_up = normed @ gate_up_weight.t()
    inter = gate_up.shape[-1] // 2
    act, up = gate_up[:, :inter], gate_up[:, inter:]
    torch.ops.dec_ops.launch_gated_silu(act, up)
    return act @ down_weight.t()


def write_prefill_kv(cache, k, v, cu_q_len, cu_k_len, layer_id, max_q_len, rope_theta=10000.0):
    """k, v (tokens, kv_heads, head_dim) of every sequence's new tokens, packed by cu_q_len."""
    batch = cu_q_len.numel() - 1
    rope_base = torch.full((batch,), rope_theta, dtype=torch.float32, device=k.device)
    torch.ops.dec_ops.launch_paged_kv_write(
        cache.block_ptrs, k, v, cu_q_len, cu_k_len, cache.cu_block_num, rope_base,
        k.shape[-1], 1.0, cache.block_seq_len, layer_id, max_q_len,
    )


def top_p_candidates(logits, vocab_size, temperatures, top_ps):
    """Sorted candidate probabilities and ids of each row inside its nucleus, and their counts."""
    torch.ops.dec_ops.launch_temperature_scale(logits, temperatures)
    probs = torch.softmax(logits, dim=-1)
    batch = probs.shape[0]
    sorted_probs = torch.empty_like(probs)
    sorted_ids = torch.empty(probs.shape, dtype=torch.int32, device=probs.device)
    kept = torch.full((batch,), vocab_size, dtype=torch.int32, device=probs.device)
    top_ks = torch.zeros(batch, dtype=torch.int32, device=probs.device)
    torch.ops.dec_ops.top_p_sort(probs, sorted_probs, sorted_ids, kept, top_ks, top_ps, vocab_size)
    torch.ops.dec_ops.launch_top_p_cut(sorted_probs, sorted_ids, kept, top_ps, vocab_size)
    return sorted_probs, sorted_ids, kept
