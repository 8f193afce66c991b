"""The fixture builder itself: deterministic SHAs and every shape it promises."""
from __future__ import annotations

import git

from tests.portq.fixtures import CommitSpec, build_repository, clone

SHAPES = [
    CommitSpec("base", files={"a.py": "x = 1\n", "run.sh": "echo\n"}, tag="v1"),
    CommitSpec("side", branch="topic", files={"b.py": "y = 2\n"}),
    CommitSpec("main", branch="main", files={"a.py": "x = 3\n"}),
    CommitSpec("Merge topic", branch="main", merge="topic"),
    CommitSpec("rename", renames={"b.py": "c.py"}),
    CommitSpec("binary", files={"w.bin": b"\x00\x01\x02"}),
    CommitSpec("empty"),
    CommitSpec("mode", modes={"run.sh": 0o755}),
    CommitSpec("submodule", submodules={"third/x": "a" * 40}),
    CommitSpec("delete", files={"c.py": None}),
]


def test_same_specs_give_the_same_shas(tmp_path):
    assert build_repository(tmp_path / "one", SHAPES) == build_repository(tmp_path / "two", SHAPES)


def test_every_promised_shape_is_built(tmp_path):
    shas = build_repository(tmp_path / "up", SHAPES)
    repo = git.Repo(tmp_path / "up")
    merge = repo.commit(shas[3])
    assert [p.hexsha for p in merge.parents] == [shas[2], shas[1]]
    renamed = repo.commit(shas[4]).diff(shas[3], R=True, M=True)
    assert [(d.rename_from, d.rename_to) for d in renamed] == [("b.py", "c.py")]
    assert repo.commit(shas[6]).tree == repo.commit(shas[5]).tree
    assert repo.commit(shas[7]).tree["run.sh"].mode == 0o100755
    assert repo.commit(shas[8]).tree["third/x"].type == "submodule"
    assert "c.py" not in repo.commit(shas[9]).tree
    assert repo.tags["v1"].commit.hexsha == shas[0]
    assert repo.commit(shas[0]).authored_datetime.isoformat() == "2025-01-01T00:00:00+00:00"


def test_clone_can_be_bare_and_shallow(tmp_path):
    build_repository(tmp_path / "up", SHAPES)
    shallow = git.Repo(clone(tmp_path / "up", tmp_path / "shallow", depth=2, bare=True))
    assert shallow.bare
    assert shallow.git.rev_parse("--is-shallow-repository") == "true"
