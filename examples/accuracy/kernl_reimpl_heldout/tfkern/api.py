"""The engine's entry points. Forward only: the engine runs inference, so
nothing here is differentiable and nothing is cast under autocast. Must not
launch kernels itself."""

from .attention import launch_attention
from .norm import launch_layernorm


# portq: ports kernl:src/kernl/implementations/layer_norm.py::layer_norm @71e8fb0975
# portq: not-carried kernl:src/kernl/implementations/layer_norm.py::layer_norm[implementation] -- one kernel only
def layernorm(x, weight, bias, eps):
    """LayerNorm of x over its last axis with weight and bias."""
    return launch_layernorm(x, weight, bias, eps)


# portq: ports kernl:src/kernl/implementations/attention.py::attention_forward @71e8fb0975
def fused_attention(q, k, v, out, scale, causal=False, mask=None):
    """softmax(q k^T * scale + mask) v of (B, H, L, D) fp16/bf16 tensors,
    written into out (which is returned). The mask is additive and
    broadcastable to (B, H, L, L)."""
    return launch_attention(q, k, v, out, scale, causal, mask)
