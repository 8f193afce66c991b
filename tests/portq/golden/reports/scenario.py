"""A scanned seed-000 fixture for the report commands' tests.

``scanned(tmp_path, title=...)`` builds the seed-000 upstream history (a base
commit and the two-half commit) with ``tests.portq.fixtures``, writes the
stale in-tree port of ``tests.portq.golden.seed000``, scans the range with
the real ``portq scan`` and returns a ``Scenario`` whose ``portq(...)``
runs any command against that upstream, tree, matrix and ledger.

Golden files of this folder are compared byte for byte; set
``PORTQ_UPDATE_GOLDEN=1`` to rewrite them (never done silently).
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from portq.cli import main
from tests.portq.fixtures import CommitSpec, build_repository
from tests.portq.golden import seed000
from tests.portq.golden.pipeline import MATRIX, write_tree

GOLDEN_DIR = Path(__file__).resolve().parent
UPSTREAM_FILE = "csrc/cache_kernels.cu"


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@dataclass
class Scenario:
    root: Path
    range: str
    shas: list[str]

    def flags(self) -> list[str]:
        return [
            "--upstream", str(self.root / "upstream"), "--tree", str(self.root / "tree"),
            "--matrix", str(self.root / "matrix.toml"), "--ledger", str(self.root / "ledger.sqlite"),
        ]

    def portq(self, *argv: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.root)  # reports/ lands beside the fixture, not in the checkout
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = main([*argv, *self.flags()])
        finally:
            os.chdir(cwd)
        return Result(code, out.getvalue(), err.getvalue())


def scanned(tmp_path: Path, title: str = seed000.TITLE, tree: dict[str, str] | None = None) -> Scenario:
    shas = build_repository(
        tmp_path / "upstream",
        [CommitSpec("base", files={UPSTREAM_FILE: seed000.BASE}), CommitSpec(title, files={UPSTREAM_FILE: seed000.AFTER})],
    )
    write_tree(tmp_path / "tree", tree or seed000.STALE_TREE)
    (tmp_path / "matrix.toml").write_text(MATRIX)
    scenario = Scenario(tmp_path, f"{shas[0][:10]}..{shas[1][:10]}", shas)
    result = scenario.portq("scan", scenario.range, "--json")
    assert result.code == 0, result.err
    return scenario


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with the golden file ``name``; rewrite it only when asked."""
    path = GOLDEN_DIR / name
    if os.environ.get("PORTQ_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"no golden file {path}: run with PORTQ_UPDATE_GOLDEN=1 once and review it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from the golden file; if the change is intended, rerun with PORTQ_UPDATE_GOLDEN=1 and review the diff"
