"""Make ``portq_kernels`` importable from a plain checkout (GPU machines run
the benchmarks without installing the package)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def ensure_portq_kernels() -> None:
    if "portq_kernels" in sys.modules or importlib.util.find_spec("portq_kernels"):
        return
    init = REPO_ROOT / "kernels" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "portq_kernels", init, submodule_search_locations=[str(init.parent)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["portq_kernels"] = module
    spec.loader.exec_module(module)


ensure_portq_kernels()
