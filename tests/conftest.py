"""Suite-wide fixtures: no network, ``portq_kernels`` importable from a plain
checkout (the GPU machine runs the suite without installing the package), and
Triton's interpreter chosen on a machine without a GPU when the caller did not
say (``TRITON_INTERPRET`` read before any kernel module is imported).
"""
from __future__ import annotations

import importlib.util
import os
import socket
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _alias_kernels_package() -> None:
    """Load ``kernels/`` as ``portq_kernels`` when the package is not installed."""
    if importlib.util.find_spec("portq_kernels") is not None:
        return
    init = REPO_ROOT / "kernels" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "portq_kernels", init, submodule_search_locations=[str(init.parent)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["portq_kernels"] = module
    spec.loader.exec_module(module)


def _interpret_without_a_gpu() -> None:
    """Without CUDA, the kernels can only run in Triton's interpreter; an explicit setting is kept."""
    if "TRITON_INTERPRET" in os.environ:
        return
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


_interpret_without_a_gpu()
_alias_kernels_package()
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def pytest_collection_modifyitems(config, items):
    """GPU-marked tests run only where CUDA is present; say so when skipped."""
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (CPU interpreter run)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """No test may reach the network: any attempt fails loudly."""

    def guarded_connect(self, address, *args, **kwargs):
        family = getattr(self, "family", None)
        if family == socket.AF_UNIX:
            return _real_connect(self, address, *args, **kwargs)
        host = address[0] if isinstance(address, tuple) else address
        if host in ("127.0.0.1", "::1", "localhost"):
            return _real_connect(self, address, *args, **kwargs)
        raise RuntimeError(f"test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)


_real_connect = socket.socket.connect
