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


# A one-row matrix for tests whose synthetic upstream keeps its ops under ops/ and whose tree ports them
# under kernels/.
OPS_ROW_MATRIX = """\
[[row]]
id       = "ACT"
title    = "Gated activation"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""


# --- a ready-made sample upstream ------------------------------------------------
#
# A small history with every shape a scan must handle, against SAMPLE_MATRIX:
# C++/CUDA and Python/Triton files, an op schema, a two-row commit, a merge,
# a rename, a binary file, an empty commit, a file owned by two rows (by path
# and by symbol), a path a row excludes, a top-level edit and a removed
# function. ``build_sample_upstream`` returns {label: sha}; entries of
# ``base..main`` are numbered in SAMPLE_ENTRY_ORDER.

SAMPLE_MATRIX = """\
[[row]]
id       = "CACHE"
title    = "cache kernels"
upstream = "up"
paths    = ["csrc/cache_kernels.cu", "csrc/torch_bindings.cpp", "csrc/attention/"]
exclude  = ["csrc/**/test_*"]
symbols  = ["concat_and_cache"]
tree     = ["port/cache/"]
tests    = ["tests/cache/"]

[[row]]
id       = "SPARSE"
title    = "sparse index utilities"
upstream = "up"
paths    = ["vllm/**/sparse_*.py"]
symbols  = ["gather_cache", "convert_*"]
tree     = ["port/sparse/"]
"""

CACHE_KERNELS_V1 = """\
#include <torch/all.h>

namespace vllm {

template <typename scalar_t>
__global__ void gather_cache_kernel(const scalar_t* src, scalar_t* dst,
                                    const int* token_to_seq, int n) {
  int i = blockIdx.x;
  dst[i] = src[token_to_seq[i]];
}

}  // namespace vllm

void gather_cache(torch::Tensor& src, torch::Tensor& dst) {
  dim3 grid(src.size(0));
  vllm::gather_cache_kernel<float><<<grid, 64>>>(nullptr, nullptr, nullptr, 0);
}

void concat_and_cache(torch::Tensor& kv) {
  kv.zero_();
}
"""

CACHE_KERNELS_V2 = CACHE_KERNELS_V1.replace(
    "  dst[i] = src[token_to_seq[i]];\n", "  if (i < n) {\n    dst[i] = src[token_to_seq[i]];\n  }\n"
)
CACHE_KERNELS_V3 = CACHE_KERNELS_V2.replace("  dim3 grid(src.size(0));\n", "  dim3 grid((src.size(0) + 127) / 128);\n")
CACHE_KERNELS_V4 = CACHE_KERNELS_V3.replace("#include <torch/all.h>\n", "#include <torch/all.h>\n#include <cuda_fp8.h>\n")
CACHE_KERNELS_V5 = CACHE_KERNELS_V4.replace(
    "\nvoid concat_and_cache(torch::Tensor& kv) {\n  kv.zero_();\n}\n", ""
)

BINDINGS_V1 = """\
#include <torch/library.h>

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("gather_cache(Tensor src, Tensor! dst) -> ()");
  ops.impl("gather_cache", torch::kCUDA, &gather_cache);
}
"""
BINDINGS_V2 = BINDINGS_V1.replace("Tensor! dst) -> ()", "Tensor! dst, int block_size) -> ()")

SPARSE_V1 = """\
import triton
import triton.language as tl


@triton.jit
def _convert_kernel(req_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.load(req_ptr + pid))


def convert_index(req, out):
    _convert_kernel[(req.numel(),)](req, out, BLOCK=128)
    return out
"""
SPARSE_V2 = SPARSE_V1.replace("    return out\n", "    out = out.contiguous()\n    return out\n").replace(
    "    pid = tl.program_id(0)\n", "    pid = tl.program_id(0).to(tl.int64)\n"
)
SPARSE_V3 = SPARSE_V2 + '''

def new_helper(x):
    return x + 1
'''
SPARSE_V4 = SPARSE_V3.replace("BLOCK=128", "BLOCK=256")

OTHER_PY = "def unrelated():\n    return 1\n"
TEST_CACHE = "void concat_and_cache(int x) {\n  (void)x;\n}\n"

SAMPLE_ENTRY_ORDER = (
    "two-rows",      # 1: cache_kernels.cu kernel body + sparse_utils.py (two rows)
    "unrelated",     # 2: vllm/other.py only
    "docs",          # 3: README only (main side of the merge)
    "merge",         # 4: merge of topic: new_helper added in sparse_utils.py
    "rename",        # 5: sparse_utils.py moved and edited
    "binary",        # 6: a binary file under an owned directory
    "empty",         # 7: no changes at all
    "both-owners",   # 8: gather_cache edited: SPARSE by symbol, CACHE by path
    "excluded",      # 9: csrc/test_cache.cu: excluded by CACHE despite its symbol
    "toplevel",      # 10: an #include outside every definition
    "removal",       # 11: concat_and_cache deleted
    "schema",        # 12: an op schema in the binding file
)


def build_sample_upstream(path: Path | str) -> dict[str, str]:
    """Build the sample upstream at ``path``; return {label: sha} (plus "base")."""
    specs = [
        ("base", CommitSpec(
            "Initial import",
            files={
                "csrc/cache_kernels.cu": CACHE_KERNELS_V1,
                "csrc/torch_bindings.cpp": BINDINGS_V1,
                "csrc/test_cache.cu": TEST_CACHE,
                "vllm/sparse_utils.py": SPARSE_V1,
                "vllm/other.py": OTHER_PY,
                "README.md": "upstream\n",
            },
            tag="base",
        )),
        ("two-rows", CommitSpec(
            "[Kernel] Bound the gather and make index math 64-bit (#101)",
            files={"csrc/cache_kernels.cu": CACHE_KERNELS_V2, "vllm/sparse_utils.py": SPARSE_V2},
        )),
        ("unrelated", CommitSpec("[Misc] Unrelated cleanup (#102)", files={"vllm/other.py": OTHER_PY + "\nX = 2\n"})),
        ("topic", CommitSpec("Add a helper", branch="topic", files={"vllm/sparse_utils.py": SPARSE_V3})),
        ("docs", CommitSpec("[Doc] Update README", branch="main", files={"README.md": "upstream docs\n"})),
        ("merge", CommitSpec("Merge branch 'topic'", branch="main", merge="topic")),
        ("rename", CommitSpec(
            "[Refactor] Move sparse utils under v1 (#103)",
            renames={"vllm/sparse_utils.py": "vllm/v1/sparse_utils.py"},
            files={"vllm/v1/sparse_utils.py": SPARSE_V4},
        )),
        ("binary", CommitSpec("Add a lookup table", files={"csrc/attention/lut.bin": bytes(range(256))})),
        ("empty", CommitSpec("Empty commit to trigger CI")),
        ("both-owners", CommitSpec("[Perf] Page-sized gather grid (#104)", files={"csrc/cache_kernels.cu": CACHE_KERNELS_V3})),
        ("excluded", CommitSpec("[Test] Touch the cache test", files={"csrc/test_cache.cu": TEST_CACHE.replace("(void)x;", "x++;")})),
        ("toplevel", CommitSpec("Include fp8 header", files={"csrc/cache_kernels.cu": CACHE_KERNELS_V4})),
        ("removal", CommitSpec("Remove concat_and_cache (#105)", files={"csrc/cache_kernels.cu": CACHE_KERNELS_V5})),
        ("schema", CommitSpec("Add block_size to the gather schema", files={"csrc/torch_bindings.cpp": BINDINGS_V2})),
    ]
    shas = build_repository(path, [spec for _, spec in specs])
    repo = git.Repo(path)
    repo.git.tag("tip")
    repo.close()
    return {label: sha for (label, _), sha in zip(specs, shas)}
