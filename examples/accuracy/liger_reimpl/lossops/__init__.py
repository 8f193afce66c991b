"""Row-wise Triton loss and normalisation ops for the language-model head.

Re-exports the entry points the engine uses; the kernels live in the
submodules. The ops target NVIDIA GPUs only: launch settings are chosen for
CUDA, and ROCm is not a platform this tree runs on. Nothing here knows about
models or training loops.
"""

# The engine calls the autograd ops directly; upstream's nn.Module wrappers are not carried.
# portq: not-carried liger:src/liger_kernel/transformers/cross_entropy.py::LigerCrossEntropyLoss -- the engine calls the op directly
# portq: not-carried liger:src/liger_kernel/transformers/fused_linear_cross_entropy.py::LigerFusedLinearCrossEntropyLoss -- the engine calls the op directly
# portq: not-carried liger:src/liger_kernel/transformers/rms_norm.py::LigerRMSNorm -- the engine holds the scale and calls the op directly

from .linear_xent import FusedLinearXentOp
from .rmsnorm import RMSNormOp
from .xent import CrossEntropyOp as cross_entropy_op

__all__ = ["FusedLinearXentOp", "RMSNormOp", "cross_entropy_op"]
