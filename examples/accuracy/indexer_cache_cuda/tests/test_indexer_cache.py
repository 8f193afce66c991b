"""The indexer key cache's CUDA ops (csrc/, registered as torch.ops.dsv32.*):
keys written then gathered back. Needs a CUDA device and the extension; the
test builds it from csrc/ with torch's extension builder (nvcc and ninja, no
network) when the ops are not registered yet, and is skipped where there is
no device, no toolchain, or the build does not succeed."""

import pathlib
import shutil

import pytest
import torch

CSRC = pathlib.Path(__file__).resolve().parent.parent / "csrc"


def _registered():
    try:
        torch.ops.dsv32.indexer_k_quant_and_cache
        torch.ops.dsv32.cp_gather_indexer_k_quant_cache
    except (AttributeError, RuntimeError):
        return False
    return True


def _build_reason():
    """None once the ops are registered, else why they cannot be."""
    if not torch.cuda.is_available():
        return "needs a CUDA device"
    if _registered():
        return None
    from torch.utils import cpp_extension

    if cpp_extension.CUDA_HOME is None or shutil.which("ninja") is None:
        return "the dsv32 extension is not built and there is no CUDA toolchain (nvcc, ninja) to build csrc/"
    try:
        cpp_extension.load(name="dsv32_indexer_cache", sources=[str(CSRC / "bindings.cpp"), str(CSRC / "indexer_k_cache.cu")],
                           is_python_module=False)
    except Exception as error:  # noqa: BLE001 - any build failure is this condition
        return f"could not build the dsv32 extension from csrc/: {type(error).__name__}: {error}"
    return None if _registered() else "the built extension did not register torch.ops.dsv32"


@pytest.fixture(scope="module", autouse=True)
def dsv32_ops():
    reason = _build_reason()
    if reason is not None:
        pytest.skip(reason)


def test_keys_written_then_gathered_round_trip():
    head_dim, block, pages = 128, 16, 4
    keys = torch.randn(20, head_dim, device="cuda").to(torch.bfloat16)
    cache = torch.zeros(pages, block, head_dim + 4, dtype=torch.uint8, device="cuda")
    slots = torch.arange(20, device="cuda", dtype=torch.int64)
    torch.ops.dsv32.indexer_k_quant_and_cache(keys, cache, slots, 128, "ue8m0")
    out = torch.empty(20, head_dim, dtype=torch.uint8, device="cuda")
    scales = torch.empty(20, 1, dtype=torch.float32, device="cuda")
    table = torch.arange(pages, dtype=torch.int32, device="cuda").reshape(1, pages)
    torch.ops.dsv32.cp_gather_indexer_k_quant_cache(cache, out, scales, table, torch.tensor([0, 20], dtype=torch.int32, device="cuda"))
    back = out.view(torch.float8_e4m3fn).float() * scales
    torch.testing.assert_close(back, keys.float(), atol=0.1, rtol=0.1)
