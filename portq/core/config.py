"""Where things are: upstream clones, the in-tree port, the matrix, the ledger.

``portq.toml`` is read from the working directory or its nearest ancestor
that has one; paths in it are relative to the directory that holds it::

    tree   = "."                          # the in-tree port (default: that directory)
    matrix = "matrix/kernel-matrix.toml"  # default
    ledger = ".portq/ledger.sqlite"       # default
    anchors = "portq-anchors.toml"        # optional: sidecar anchors, for a tree not to be edited
    reviews = "portq-reviews.toml"        # optional: human verdicts kept in the tree

    [upstream.vllm]
    path = "../vllm"                      # a work tree or a bare clone
    web  = "https://github.com/vllm-project/vllm/commit/{sha}"   # optional: links in reports

Flags override it on every command (paths in flags are relative to the
working directory):

- ``--upstream NAME=PATH`` sets (or adds) upstream NAME.
- ``--upstream NAME`` picks the upstream to scan when several are known.
- ``--upstream PATH`` is the upstream that the matrix rows name, when they all
  name one; with several, ``NAME=PATH`` is required (``resolve_upstream``
  says so). A value that names a known upstream is a NAME; anything else is a
  PATH (write ``./vllm`` for a directory that shares an upstream's name).
- ``--tree PATH``, ``--matrix PATH``, ``--ledger PATH``.

Without a ``portq.toml`` the working directory is the root, so a user can
bring any repository, tree and matrix with flags alone.

This module reads configuration only: it does not open git repositories,
parse the matrix or touch the ledger.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from portq.core import toml_input
from portq.core.errors import ConfigError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

CONFIG_FILE = "portq.toml"
DEFAULT_MATRIX = "matrix/kernel-matrix.toml"
DEFAULT_LEDGER = ".portq/ledger.sqlite"

_TOP_LEVEL_KEYS = ("tree", "matrix", "ledger", "anchors", "reviews", "upstream")
_UPSTREAM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")



def relative_label(path: Path, *roots: Path) -> str:
    """``path`` as pages and reports cite it: relative to the first of
    ``roots`` that holds it (repository paths, not one machine's absolute
    ones), else as given."""
    for root in roots:
        try:
            return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


@dataclass
class Config:
    """Resolved configuration. Paths are absolute."""

    root: Path  # directory of portq.toml, or the working directory without one
    tree: Path
    matrix_path: Path
    ledger_path: Path
    upstreams: dict[str, Path] = field(default_factory=dict)
    config_path: Path | None = None  # the portq.toml read, if any
    selected_upstream: str | None = None  # from --upstream NAME or NAME=PATH
    bare_upstream_path: Path | None = None  # from --upstream PATH
    declared_upstreams: frozenset[str] = frozenset()  # names portq.toml defines
    upstream_web: dict[str, str] = field(default_factory=dict)  # name -> commit URL template with {sha}
    anchors_path: Path | None = None  # the sidecar anchors file portq.toml names, if any
    reviews_path: Path | None = None  # the reviews file portq.toml names (``portq.tree.reviews_file``), if any

    def resolve_upstream(self, matrix_upstreams: Sequence[str]) -> tuple[str, Path]:
        """The upstream a scan reads: ``(name, path)``.

        ``matrix_upstreams`` are the upstream names the matrix rows use, in
        order of first use.
        """
        names = list(dict.fromkeys(matrix_upstreams))
        upstreams = dict(self.upstreams)
        if self.bare_upstream_path is not None:
            if len(names) != 1:
                listed = ", ".join(names) or "none"
                raise ConfigError(
                    f"--upstream {self.bare_upstream_path}: the matrix names several upstreams "
                    f"({listed}); write --upstream NAME=PATH"
                    if names
                    else f"--upstream {self.bare_upstream_path}: the matrix names no upstream to give this path to"
                )
            upstreams[names[0]] = self.bare_upstream_path
            chosen = self.selected_upstream or names[0]
        elif self.selected_upstream is not None:
            chosen = self.selected_upstream
        else:
            candidates = [n for n in names if n in upstreams] or list(upstreams)
            if not candidates:
                where = f" in {self.config_path}" if self.config_path else ""
                raise ConfigError(
                    f"no upstream is configured{where}: pass --upstream PATH "
                    "(or NAME=PATH), or add [upstream.NAME] path = \"...\" to portq.toml"
                )
            if len(candidates) > 1:
                raise ConfigError(
                    f"several upstreams are configured ({', '.join(candidates)}): "
                    "pick one with --upstream NAME"
                )
            chosen = candidates[0]
        if chosen not in upstreams:
            known = ", ".join(sorted(upstreams)) or "none"
            raise ConfigError(
                f"--upstream {chosen}: no such upstream (configured: {known}); "
                f"write --upstream {chosen}=PATH"
            )
        return chosen, upstreams[chosen]

    def known_upstream_names(self) -> set[str]:
        """Names the configuration or the flags give a path to."""
        return set(self.upstreams)


def find_config_file(start: Path) -> Path | None:
    """``portq.toml`` in ``start`` or its nearest ancestor that has one."""
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


def _toml_error_line(error: tomllib.TOMLDecodeError) -> str:
    match = re.search(r"\(at line (\d+)", str(error))
    return match.group(1) if match else "?"


def _read_config_file(path: Path) -> dict:
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 (byte {data[error.start]:#04x}): save it as UTF-8") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        return toml_input.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise ConfigError(f"{path}:{_toml_error_line(error)}: invalid TOML: {message}") from None


def _expect_string(data: dict, key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: '{key}' must be a non-empty string path, not {value!r}")
    return value


def _parse_upstream_flags(
    values: Iterable[str], known_names: set[str], cwd: Path
) -> tuple[dict[str, Path], str | None, Path | None]:
    """Split ``--upstream`` values into (NAME=PATH pairs, NAME choice, bare PATH)."""
    assigned: dict[str, Path] = {}
    selected: str | None = None
    bare: Path | None = None
    for value in values:
        if not value:
            raise ConfigError("--upstream: expected NAME, PATH or NAME=PATH, got an empty value")
        name, sep, path = value.partition("=")
        if sep and _UPSTREAM_NAME.match(name) and "/" not in name:
            if not path:
                raise ConfigError(f"--upstream {value}: expected NAME=PATH with a path after '='")
            resolved = (cwd / path).resolve()
            if assigned.get(name, resolved) != resolved:
                raise ConfigError(f"--upstream {value}: upstream {name} was already given as {assigned[name]}; "
                                  "give each upstream one path")
            assigned[name] = resolved
        elif (value in known_names or value in assigned) and "/" not in value:
            if selected is not None and selected != value:
                raise ConfigError(f"--upstream {value}: a second upstream choice ({selected} was chosen first); "
                                  "a command reads one upstream")
            selected = value
        else:
            if bare is not None:
                raise ConfigError(
                    f"--upstream {value}: a second bare path (first: {bare}); write NAME=PATH for each"
                )
            bare = (cwd / value).resolve()
    if selected is None and len(assigned) == 1:
        [selected] = assigned
    return assigned, selected, bare


def load_config(
    *,
    cwd: Path | None = None,
    upstream: Sequence[str] | None = None,
    tree: str | None = None,
    matrix: str | None = None,
    ledger: str | None = None,
) -> Config:
    """Read portq.toml (if any) and apply the flags."""
    cwd = (cwd or Path(os.getcwd())).resolve()
    config_path = find_config_file(cwd)
    data: dict = {}
    root = cwd
    if config_path is not None:
        data = _read_config_file(config_path)
        root = config_path.parent
        unknown = sorted(set(data) - set(_TOP_LEVEL_KEYS))
        if unknown:
            raise ConfigError(
                f"{config_path}: unknown key '{unknown[0]}' (expected one of: {', '.join(_TOP_LEVEL_KEYS)})"
            )

    where = str(config_path) if config_path else CONFIG_FILE
    upstreams: dict[str, Path] = {}
    web_templates: dict[str, str] = {}
    table = data.get("upstream", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: 'upstream' must be a table of [upstream.NAME] sections")
    for name, section in table.items():
        if not _UPSTREAM_NAME.match(name):
            raise ConfigError(f"{where}: upstream name {name!r} must be letters, digits, '-', '_' or '.'")
        if not isinstance(section, dict):
            raise ConfigError(f"{where}: [upstream.{name}] must be a table with path = \"...\"")
        unknown = sorted(set(section) - {"path", "web"})
        if unknown:
            raise ConfigError(f"{where}: [upstream.{name}] has unknown key '{unknown[0]}' (expected: path, web)")
        path = _expect_string(section, "path", f"{where}: [upstream.{name}]")
        if path is None:
            raise ConfigError(f"{where}: [upstream.{name}] needs path = \"...\"")
        upstreams[name] = (root / path).resolve()
        web = _expect_string(section, "web", f"{where}: [upstream.{name}]")
        if web is not None:
            web_templates[name] = check_web_template(web, f"{where}: [upstream.{name}] web")
    declared = frozenset(upstreams)

    def configured(key: str, flag: str | None, default: str) -> Path:
        if flag is not None:
            if not flag:
                raise ConfigError(f"--{key}: expected a path, got an empty value")
            return (cwd / flag).resolve()
        value = _expect_string(data, key, where)
        return (root / (value or default)).resolve()

    tree_path = configured("tree", tree, ".")
    matrix_path = configured("matrix", matrix, DEFAULT_MATRIX)
    ledger_path = configured("ledger", ledger, DEFAULT_LEDGER)
    anchors_value = _expect_string(data, "anchors", where)
    anchors_path = (root / anchors_value).resolve() if anchors_value else None
    reviews_value = _expect_string(data, "reviews", where)
    if reviews_value is not None and not reviews_value.strip():
        raise ConfigError(f"{where}: reviews: expected a file path, got an empty value")
    reviews_path = (root / reviews_value).resolve() if reviews_value else None

    assigned, selected, bare = _parse_upstream_flags(upstream or (), set(upstreams), cwd)
    upstreams.update(assigned)
    return Config(
        root=root,
        tree=tree_path,
        matrix_path=matrix_path,
        ledger_path=ledger_path,
        upstreams=upstreams,
        config_path=config_path,
        selected_upstream=selected,
        bare_upstream_path=bare,
        declared_upstreams=declared,
        upstream_web=web_templates,
        anchors_path=anchors_path,
        reviews_path=reviews_path,
    )


_WEB_TEMPLATE = re.compile(r"^https?://[^\s<>\"'`]+$")


def check_web_template(value: str, where: str) -> str:
    """A commit URL template: http(s), one ``{sha}``, nothing a link could be broken out of."""
    if "{sha}" not in value:
        raise ConfigError(f"{where}: expected a URL with {{sha}} where the commit goes, got {value!r}")
    if not _WEB_TEMPLATE.match(value) or value.replace("{sha}", "").count("{") or "}" in value.replace("{sha}", ""):
        raise ConfigError(f"{where}: expected an http(s) URL without spaces, quotes or braces other than {{sha}}, got {value!r}")
    return value


def require_tree(config: Config) -> Path:
    """The tree root, or a ConfigError when it is not a directory."""
    if not config.tree.is_dir():
        what = "does not exist" if not config.tree.exists() else "is not a directory"
        raise ConfigError(f"tree {config.tree} {what}: pass --tree PATH or set tree = \"...\" in portq.toml")
    if not os.access(config.tree, os.R_OK | os.X_OK):
        raise ConfigError(f"tree {config.tree} is not readable: give portq read access to it, or pass --tree PATH")
    return config.tree
