"""Build small upstream git histories inside tests (GitPython, fixed dates).

A history is a list of ``CommitSpec``; each says what the tree looks like
after the commit, as changes against the commit before it on its branch::

    from tests.portq.fixtures import CommitSpec, build_repository

    shas = build_repository(tmp_path / "up", [
        CommitSpec("base", files={"csrc/cache.cu": CACHE_V1, "README.md": "hi\\n"}),
        CommitSpec("feature work", branch="topic", files={"a.py": "x = 1\\n"}),
        CommitSpec("Merge topic", branch="main", merge="topic"),
        CommitSpec("move it (#12)", renames={"a.py": "b.py"}),
        CommitSpec("blob", files={"w.bin": b"\\x00\\x01"}),
        CommitSpec("nothing"),                       # an empty commit
        CommitSpec("drop it", files={"b.py": None}),  # None deletes
    ])

``files`` maps a path to its new text (``str``) or bytes, or ``None`` to
delete it. ``renames`` maps old → new path (applied first, so ``files`` may
then edit the new path). ``modes`` sets the executable bit (``{"run.sh":
0o755}``), ``submodules`` records a gitlink at a path (``{"third_party/x":
SHA}``). ``branch`` commits on that branch, creating it at the current HEAD
when new; ``merge`` makes a merge commit of that branch into the current one
(``--no-ff``; files in the same spec are applied on top of the merge).
``tag`` tags the new commit.

Commit *i* is authored and committed at ``FIXED_DATE`` + *i* hours by
``AUTHOR``, so the same specs give the same SHAs on every machine.
``build_repository`` returns the SHAs in spec order. ``clone(src, dst,
bare=..., depth=...)`` makes a bare or shallow copy (local, no network).

This module only builds repositories: it asserts nothing and must not reach
the network.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import git

FIXED_DATE = 1735689600  # 2025-01-01T00:00:00Z
AUTHOR_NAME = "Upstream Developer"
AUTHOR_EMAIL = "dev@upstream.invalid"
AUTHOR = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}>"


@dataclass
class CommitSpec:
    """One commit of a fixture history (see the module docstring)."""

    message: str
    files: dict[str, str | bytes | None] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    submodules: dict[str, str] = field(default_factory=dict)
    branch: str | None = None
    merge: str | None = None
    tag: str | None = None


def _environment(index: int) -> dict[str, str]:
    stamp = f"@{FIXED_DATE + 3600 * index} +0000"
    return {
        "GIT_AUTHOR_NAME": AUTHOR_NAME,
        "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_NAME": AUTHOR_NAME,
        "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL,
        "GIT_COMMITTER_DATE": stamp,
    }


def _isolated(repo: git.Repo) -> None:
    """Keep the user's git configuration from changing the fixture."""
    with repo.config_writer() as writer:
        writer.set_value("user", "name", AUTHOR_NAME)
        writer.set_value("user", "email", AUTHOR_EMAIL)
        writer.set_value("commit", "gpgsign", "false")
        writer.set_value("tag", "gpgsign", "false")
        writer.set_value("core", "autocrlf", "false")


def _apply(repo: git.Repo, root: Path, spec: CommitSpec) -> None:
    for old, new in spec.renames.items():
        (root / new).parent.mkdir(parents=True, exist_ok=True)
        repo.git.mv(old, new)
    for path, content in spec.files.items():
        target = root / path
        if content is None:
            repo.git.rm("-q", "--", path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_bytes(content.encode("utf-8"))
        repo.git.add("--", path)
    for path, mode in spec.modes.items():
        repo.git.update_index("--chmod=" + ("+x" if mode & 0o111 else "-x"), "--", path)
    for path, sha in spec.submodules.items():
        repo.git.update_index("--add", "--cacheinfo", f"160000,{sha},{path}")


def build_repository(
    path: Path | str, commits: Sequence[CommitSpec], *, initial_branch: str = "main"
) -> list[str]:
    """Create a repository at ``path`` with ``commits``; return their SHAs in order."""
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    repo = git.Repo.init(root, initial_branch=initial_branch)
    _isolated(repo)
    shas: list[str] = []
    for index, spec in enumerate(commits):
        environment = _environment(index)
        with repo.git.custom_environment(**environment):
            if spec.branch is not None and shas:
                existing = {head.name for head in repo.heads}
                if spec.branch in existing:
                    repo.git.checkout("-q", spec.branch)
                else:
                    repo.git.checkout("-q", "-b", spec.branch)
            elif spec.branch is not None:
                repo.git.symbolic_ref("HEAD", f"refs/heads/{spec.branch}")
            if spec.merge is not None:
                repo.git.merge("--no-ff", "--no-commit", "-q", spec.merge)
            _apply(repo, root, spec)
            repo.git.commit("-q", "--allow-empty", "--no-verify", "-m", spec.message)
            if spec.tag:
                repo.git.tag(spec.tag)
        shas.append(repo.head.commit.hexsha)
    repo.close()
    return shas


def clone(source: Path | str, destination: Path | str, *, bare: bool = False, depth: int | None = None) -> Path:
    """A local clone of ``source``: ``bare`` and/or shallow to ``depth`` commits."""
    arguments = ["clone", "-q"] + ([f"--depth={depth}"] if depth is not None else [])
    if bare:
        arguments.append("--bare")
    # A shallow clone needs the file:// transport; it never leaves this machine.
    arguments += [Path(source).resolve().as_uri(), str(destination)]
    git.Git().execute(["git", *arguments], env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    return Path(destination)
