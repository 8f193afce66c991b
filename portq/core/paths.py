"""Path rules: which files are tests, benchmarks, docs, CI or build files.

One answer everywhere: the classifier's ``non-code`` justification, the
reachability split into test and non-test callers, and ``portq matrix`` all
ask here. ``conftest.py`` is a test file (pytest runs it with the tests), so
a caller in it is a test caller and an upstream change to it is ``tests``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

_TEST_DIRECTORIES = frozenset({"tests", "test"})
_NON_CODE_NAMES = frozenset(
    {"CODEOWNERS", "README", "LICENSE", "CHANGELOG", "MAINTAINERS", "OWNERS", "Dockerfile",
     "CMakeLists.txt", "Makefile", "setup.py", "setup.cfg", "pyproject.toml",
     ".pre-commit-config.yaml", ".gitignore", ".clang-format"}
)
_NON_CODE_SUFFIXES = frozenset(
    {".md", ".rst", ".txt", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".sh", ".cmake",
     ".png", ".svg", ".jpg", ".html", ".csv", ".lock", ".in"}
)


# A scan asks about the same paths once per touched symbol or caller, thousands
# of times; each answer depends on the path alone.
@lru_cache(maxsize=8192)
def is_test_file(path: str) -> bool:
    """Tests proper (what pytest runs, ``conftest.py`` included), not benchmarks."""
    pure = PurePosixPath(path)
    if any(part in _TEST_DIRECTORIES for part in pure.parts[:-1]):
        return True
    name = pure.name
    return name.startswith("test_") or name == "conftest.py" or bool(re.match(r".+_test\.[^.]+$", name))


def is_benchmark_path(path: str) -> bool:
    return any(part in ("benchmarks", "benchmark") for part in PurePosixPath(path).parts[:-1])


def is_test_path(path: str) -> bool:
    """Tests or benchmarks by location: what does not make a port reachable from production."""
    return is_benchmark_path(path) or is_test_file(path)


@lru_cache(maxsize=8192)
def non_code_kind(path: str) -> str | None:
    """Why a path is tests/docs/CI/build/benchmarks, or None for code."""
    pure = PurePosixPath(path)
    directories = set(pure.parts[:-1])
    if is_test_file(path):
        return "tests"
    if directories & {"docs", "doc"}:
        return "docs"
    if is_benchmark_path(path):
        return "benchmarks"
    if directories & {".github", ".buildkite", ".gitlab", ".circleci", "ci", ".ci"}:
        return "CI"
    if pure.name in _NON_CODE_NAMES or pure.name.split(".")[0] in ("README", "CODEOWNERS", "LICENSE"):
        return "build/docs"
    if pure.suffix.lower() in _NON_CODE_SUFFIXES:
        return "docs/config"
    return None
