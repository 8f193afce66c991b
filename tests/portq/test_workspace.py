"""The workspace: which clone belongs to which upstream, and what it loads lazily."""

from __future__ import annotations

import sys

from portq.core.config import load_config
from portq.pipeline.workspace import Workspace

MATRIX = '[[row]]\nid = "ROW-A"\nupstream = "vllm"\npaths = ["a/**"]\n'


def test_a_bare_path_is_the_matrix_upstream_and_a_named_pair_its_own(tmp_path):
    (tmp_path / "m.toml").write_text(MATRIX)
    config = load_config(cwd=tmp_path, matrix="m.toml", upstream=["clone", "aiter=other"])
    with Workspace(config) as workspace:
        assert workspace.upstream_path("vllm") == tmp_path / "clone"
        assert workspace.upstream_path("aiter") == tmp_path / "other"
        assert workspace.named_upstream() == "aiter"


def test_nothing_is_loaded_before_it_is_asked_for(tmp_path):
    config = load_config(cwd=tmp_path, matrix="missing.toml", ledger="missing.sqlite")
    before = set(sys.modules)
    with Workspace(config) as workspace:
        assert workspace.config is config  # no matrix, tree or ledger was opened (they do not exist)
    assert not {name for name in set(sys.modules) - before if name.startswith("portq.")} - {"portq.pipeline.workspace"}
