"""Build hook: copy what the commands read at run time into the package.

The report templates and the demo's data are maintained at the top of the
repository (``templates/``, ``examples/``, ``matrix/``, ``kernels/``); a wheel
carries a copy of them under ``portq/_data/`` so that a regular install runs
``portq demo``, ``portq summary --html`` and ``portq file-issue --dashboard``
without a checkout (``portq.core.bundled`` says where to look). The metadata is in
pyproject.toml; this file adds only the copy.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

BUNDLED = {
    "templates": "templates",
    "examples/upstream": "demo/examples/upstream",
    "examples/stale-tree": "demo/examples/stale-tree",
    "matrix": "demo/matrix",
    "kernels": "demo/kernels",
}
"""Source folder in the repository -> folder under portq/_data in the build."""

_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")


def bundle(root: Path, data: Path) -> None:
    """Copy BUNDLED from the repository at ``root`` into ``data`` (a package's _data/)."""
    for source, destination in BUNDLED.items():
        if not (root / source).is_dir():
            raise SystemExit(f"setup.py: {source}/ is missing; build from a checkout or an sdist")
        target = data / destination
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(root / source, target, ignore=_SKIP)


class BuildWithData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout itself
        bundle(Path(__file__).resolve().parent, Path(self.build_lib) / "portq" / "_data")


if __name__ == "__main__":
    setup(cmdclass={"build_py": BuildWithData})
