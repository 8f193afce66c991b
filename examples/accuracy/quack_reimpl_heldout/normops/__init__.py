"""Row norms of the engine (RMSNorm and LayerNorm forward) as Triton kernels.

Inference only: no backward kernels, no clusters, one program per row.
"""

# portq: not-carried quack:quack/rmsnorm.py::RMSNormBackward -- inference only, no backward kernel
# portq: not-carried quack:quack/rmsnorm.py::rmsnorm_bwd -- inference only, no backward
# portq: not-carried quack:quack/rmsnorm.py::_rmsnorm_bwd -- inference only, no backward
# portq: not-carried quack:quack/rmsnorm.py::rmsnorm_bwd_ref -- inference only, no backward
# portq: not-carried quack:quack/rmsnorm.py::_get_sm_count -- sizes the backward's partial weight gradients, which this engine does not compute

from .rms_norm import rmsnorm, rmsnorm_fwd, RMSNormLayer
from .layernorm import layernorm_fwd

__all__ = ["rmsnorm", "rmsnorm_fwd", "RMSNormLayer", "layernorm_fwd"]
