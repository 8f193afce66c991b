"""Fused Triton ops of the decoder: RMSNorm, rotary embedding, the SwiGLU
gate and the head's cross-entropy.

Re-exports what the engine calls; the kernels live in the submodules. The
ops run on one NVIDIA GPU at a time (no device guards, no ROCm tuning).
Nothing here knows about models, adapters or training loops.
"""

# The engine calls the ops directly; upstream's patching of model classes is not carried.
# portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::Unsloth_LlamaRMSNorm -- the engine holds its norms and calls rms_norm
# portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::patch_rms_layernorm -- no model classes are patched
# portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::unpatch_rms_layernorm -- no model classes are patched
# portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::patch_loss_functions -- no model classes are patched

from . import rope
from .rmsnorm import RMSNormFn, rms_norm
from .swiglu import silu_mul
from .xent import CrossEntropyFn, cross_entropy_loss

__all__ = ["CrossEntropyFn", "RMSNormFn", "cross_entropy_loss", "rms_norm", "rope", "silu_mul"]
