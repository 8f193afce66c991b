"""The engine's entry point to two-score attention. Forward only: the engine
runs inference, so nothing here is differentiable. Must not launch kernels
itself."""

from .kernel import two_score_forward


# portq: ports flagattention:src/flag_attn/piecewise.py::attention
# portq: ports flagattention:src/flag_attn/piecewise.py::PiecewiseAttention.forward
# portq: not-carried flagattention:src/flag_attn/piecewise.py::PiecewiseAttention.backward -- inference only: no autograd
# portq: not-carried flagattention:src/flag_attn/piecewise.py::standalone_backward -- inference only: no autograd
# portq: not-carried flagattention:src/flag_attn/piecewise.py::_bwd_preprocess -- inference only: no autograd
# portq: not-carried flagattention:src/flag_attn/piecewise.py::_bwd_kv_kernel -- inference only: no autograd
# portq: not-carried flagattention:src/flag_attn/piecewise.py::_bwd_q_kernel -- inference only: no autograd
# portq: not-carried flagattention:src/flag_attn/piecewise.py::get_bwd_config -- inference only: no autograd
def two_score_attention(q1, k1, q2, k2, v, w, causal, sm_scale):
    """Attention of (B, H, L, D) tensors scoring near keys with (q1, k1) and
    keys at least w behind the query with (q2, k2)."""
    return two_score_forward(q1, k1, q2, k2, v, w, causal, sm_scale)
