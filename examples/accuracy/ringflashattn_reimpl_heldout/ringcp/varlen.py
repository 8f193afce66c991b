"""Ring attention over packed variable-length sequences, forward only: the
key/value blocks travel round the ring while each rank's queries stay, each
step's local attention is merged into the running output through the
log-sum-exp. Causal ring: rank r attends to the blocks of ranks 0..r, the
first (its own) with the causal mask, the earlier ones in full."""

from .comm import RingComm
from .lse_layout import flatten_varlen_lse, unflatten_varlen_lse
from .merge import update_out_and_lse


def _flash_varlen_block(q, k, v, cu_seqlens, max_seqlen, softmax_scale, causal, window_size):
    """One step's local attention through flash-attn's variable-length
    forward: (out, lse) with lse padded per sequence, (batch, heads, max_seqlen)."""
    from flash_attn.flash_attn_interface import _flash_attn_varlen_forward

    block_out, _, _, _, _, block_lse, _, _ = _flash_attn_varlen_forward(
        q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, 0.0, softmax_scale,
        causal=causal, window_size=window_size, alibi_slopes=None, return_softmax=False,
    )
    return block_out, block_lse


# the local attention of one ring step (tests substitute a torch reference)
block_attention = _flash_varlen_block


# portq: ports ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_forward @10d992c
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_forward[dropout_p] -- inference only: no dropout
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_forward[alibi_slopes] -- the engine's models use rotary positions, no ALiBi
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_forward[deterministic] -- a backward-pass option; no backward here
def ring_varlen_forward(group, q, k, v, cu_seqlens, max_seqlen, softmax_scale,
                        causal=True, window_size=(-1, -1)):
    """q, k, v: (tokens, heads, dim) packed by cu_seqlens. Returns out
    (tokens, heads, dim) in q's dtype and lse (batch, heads, max_seqlen)."""
    ring = RingComm(group)
    out, lse = None, None
    for step in range(ring.world_size):
        more = step + 1 != ring.world_size
        if more:
            next_k = ring.send_recv(k)
            next_v = ring.send_recv(v)
            ring.commit()
        if not causal or step <= ring.rank:
            part_out, part_lse = block_attention(
                q, k, v, cu_seqlens, max_seqlen, softmax_scale, causal and step == 0, window_size
            )
            part_lse = flatten_varlen_lse(part_lse, cu_seqlens)
            out, lse = update_out_and_lse(out, lse, part_out, part_lse)
        if more:
            ring.wait()
            k = next_k
            v = next_v
    return out.to(q.dtype), unflatten_varlen_lse(lse, cu_seqlens, max_seqlen)


# portq: ports ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_func @10d992c
# portq: ports ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::RingFlashAttnVarlenFunc.forward @10d992c
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_func[dropout_p] -- inference only: no dropout
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_func[alibi_slopes] -- the engine's models use rotary positions, no ALiBi
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_func[deterministic] -- a backward-pass option; no backward here
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_func[return_attn_probs] -- the engine never asks for the log-sum-exp
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::RingFlashAttnVarlenFunc.backward -- inference only: no autograd
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_backward -- inference only: no autograd
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_qkvpacked_func -- the engine keeps q, k and v apart
# portq: not-carried ringflashattn:ring_flash_attn/ring_flash_attn_varlen.py::ring_flash_attn_varlen_kvpacked_func -- the engine keeps q, k and v apart
def ring_varlen_attention(q, k, v, cu_seqlens, max_seqlen, softmax_scale=None,
                          causal=False, window_size=(-1, -1), group=None):
    """The engine's entry point: ring attention of packed (tokens, heads, dim)
    q, k, v over the ranks of `group` (the default group when None)."""
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    out, _ = ring_varlen_forward(
        group, q, k.contiguous(), v.contiguous(), cu_seqlens, max_seqlen,
        softmax_scale, causal=causal, window_size=window_size,
    )
    return out
