"""The package layout: every sub-package ships, and every package says what it owns."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from portq.core.config import tomllib

REPO = Path(__file__).resolve().parents[2]


def test_every_portq_package_is_in_pyproject():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "portq").rglob("__init__.py")}
    assert on_disk - listed == set()


def test_every_stage_package_has_a_docstring_and_a_face_that_resolves():
    for init in sorted((REPO / "portq").glob("*/__init__.py")):
        package = importlib.import_module(f"portq.{init.parent.name}")
        assert package.__doc__ and "must not" in package.__doc__.lower(), init
        for name in getattr(package, "__all__", ()):
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"


def test_the_import_contracts_hold():
    """``lint-imports`` (CI runs it too) with pyproject's contracts: the
    stages of the data flow, the signature record below its extractors, the
    classifier's rules below the verdict table that asks them, and no GPU
    stack in the auditor."""
    result = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                             "sys.exit(lint_imports_command())", "--no-cache"], cwd=REPO, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in result.stdout
