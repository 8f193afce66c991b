"""Builds the engine's copy of FBGEMM's KV-cache ops: the vendored
csrc/third_party/fbgemm/kv_cache.cu (kernels and host functions) and
kv_cache.cpp (their torch.ops.fbgemm schemas), compiled unmodified against the
installed fbgemm_gpu headers. This module only compiles and loads; the
attention steps that call the ops live in engine/cache_step.py."""

from pathlib import Path

import torch

CSRC = Path(__file__).resolve().parent.parent / "csrc"
SOURCES = [CSRC / "third_party" / "fbgemm" / "kv_cache.cu", CSRC / "third_party" / "fbgemm" / "kv_cache.cpp"]


def ops_loaded():
    """Whether torch.ops.fbgemm holds the KV-cache ops (from this build or an fbgemm_gpu install)."""
    return hasattr(torch.ops, "fbgemm") and hasattr(torch.ops.fbgemm, "rope_qkv_varseq_prefill")


def load(include_dirs=()):
    """Compiles and loads the vendored sources once; include_dirs must hold fbgemm_gpu/utils/*.cuh."""
    if ops_loaded():
        return
    from torch.utils.cpp_extension import load as load_extension

    load_extension(
        name="engine_fbgemm_kv_cache",
        sources=[str(s) for s in SOURCES],
        extra_include_paths=[str(d) for d in include_dirs],
        extra_cuda_cflags=["-O3", "--use_fast_math", "-std=c++17"],
        is_python_module=False,
    )
