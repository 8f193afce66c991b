"""Sidecar anchors: the TOML form of the comment anchors, read by everything that reads anchors."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from portq.core.config import load_config
from portq.core.errors import ConfigError
from portq.tree.anchors import NOT_CARRIED, PORTS
from portq.tree.matrix import Matrix
from portq.tree.matrix_problems import build_matrix_context
from portq.tree.sidecar import SidecarEntry, parse_sidecar, render_sidecar
from portq.tree.tree_index import TreeIndex

VENDORED = '''\
import triton


@triton.jit
def _rms_kernel(x_ptr, n):
    pass


def rms_norm_forward(x, eps):
    _rms_kernel[(1,)](x, 4)
    return x
'''

COMMENTED = '''\
import triton


# portq: ports kernlib:src/ops/rms_norm.py::_rms_kernel @1a2b3c4d5e
@triton.jit
def _rms_kernel(x_ptr, n):
    pass


# portq: ports kernlib:src/ops/rms_norm.py::rms_norm_forward @1a2b3c4d5e
# portq: not-carried kernlib:src/ops/rms_norm.py::rms_norm_backward -- forward only
def rms_norm_forward(x, eps):
    _rms_kernel[(1,)](x, 4)
    return x
'''

SIDECAR = '''\
[[anchor]]
tree  = "norms/rms_norm.py::_rms_kernel"
ports = "kernlib:src/ops/rms_norm.py::_rms_kernel"
at    = "1a2b3c4d5e"

[[anchor]]
tree  = "norms/rms_norm.py::rms_norm_forward"
ports = "kernlib:src/ops/rms_norm.py::rms_norm_forward"
at    = "1a2b3c4d5e"

[[not-carried]]
ports = "kernlib:src/ops/rms_norm.py::rms_norm_backward"
why   = "forward only"
tree  = "norms/rms_norm.py::rms_norm_forward"
'''

CALLER = "from norms.rms_norm import rms_norm_forward\n\ndef layer(x):\n    return rms_norm_forward(x, 1e-6)\n"


def _essentials(index: TreeIndex) -> list[tuple]:
    return sorted((a.kind, a.reference, a.pin, a.reason, a.file, a.definition, a.definition_line)
                  for a in index.anchors)


def test_sidecar_entries_read_as_the_comment_anchors_they_stand_for():
    by_sidecar = TreeIndex.from_sources({"norms/rms_norm.py": VENDORED, "engine/layer.py": CALLER}, sidecar=SIDECAR)
    by_comment = TreeIndex.from_sources({"norms/rms_norm.py": COMMENTED, "engine/layer.py": CALLER})
    # the definitions sit lower in the commented file: compare what the anchors say, not where
    strip = lambda rows: [row[:6] for row in rows]
    assert strip(_essentials(by_sidecar)) == strip(_essentials(by_comment))
    [port] = by_sidecar.ports_for("kernlib", ["src/ops/rms_norm.py"], "rms_norm_forward", "rms_norm_forward")
    assert port.definition.qualified_name == "rms_norm_forward" and port.anchor.style == "sidecar"
    assert port.anchor.cite == "norms/rms_norm.py:9"
    assert port.definition.signature is not None and port.definition.signature.name == "rms_norm_forward"
    [declared] = by_sidecar.not_carried_for("kernlib", ["src/ops/rms_norm.py"], "rms_norm_backward", "rms_norm_backward")
    assert declared.reason == "forward only"


def test_sidecar_ports_are_reached_by_their_callers():
    index = TreeIndex.from_sources({"norms/rms_norm.py": VENDORED, "engine/layer.py": CALLER}, sidecar=SIDECAR)
    callers = index.reachability.callers("rms_norm_forward", "norms/rms_norm.py", "rms_norm_forward")
    assert [site.file for site in callers.non_test] == ["engine/layer.py"]


def test_sidecar_signature_equals_the_comment_anchors_signature():
    by_sidecar = TreeIndex.from_sources({"norms/rms_norm.py": VENDORED}, sidecar=SIDECAR)
    by_comment = TreeIndex.from_sources({"norms/rms_norm.py": COMMENTED})
    [a] = by_sidecar.ports_for("kernlib", ["src/ops/rms_norm.py"], "rms_norm_forward", "rms_norm_forward")
    [b] = by_comment.ports_for("kernlib", ["src/ops/rms_norm.py"], "rms_norm_forward", "rms_norm_forward")
    assert _without_lines(a.definition.signature.to_json()) == _without_lines(b.definition.signature.to_json())


def _without_lines(value):
    """A signature's JSON without line numbers (the commented file has its definitions lower down)."""
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items() if k != "line" and not k.endswith("_line")}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


MATRIX = """
[[row]]
id       = "NORM"
title    = "rms norm"
upstream = "kernlib"
paths    = ["src/ops/"]
tree     = ["norms/"]
"""


def test_an_entry_naming_a_missing_definition_is_a_matrix_problem():
    broken = SIDECAR + '\n[[anchor]]\ntree  = "norms/rms_norm.py::rms_norm_backward"\nports = "kernlib:src/ops/rms_norm.py::rms_norm_backward"\n' \
        + '\n[[anchor]]\ntree  = "norms/gone.py::f"\nports = "kernlib:src/ops/rms_norm.py::f"\n'
    index = TreeIndex.from_sources({"norms/rms_norm.py": VENDORED}, sidecar=broken)
    context = build_matrix_context(Matrix.parse(MATRIX, "m.toml"), index, Path("."), "m.toml")
    found = [(p["line"], p["subject"], p["detail"]) for p in context["problems"] if p["kind"] == "sidecar-unresolved"]
    assert found == [
        (16, "kernlib:src/ops/rms_norm.py::rms_norm_backward",
         "tree = norms/rms_norm.py::rms_norm_backward: no definition rms_norm_backward in norms/rms_norm.py"),
        (20, "kernlib:src/ops/rms_norm.py::f", "tree = norms/gone.py::f: no file norms/gone.py in the tree"),
    ]
    # the resolved entries still port what they name
    ports = {p["definition"] for row in context["rows"] for p in row["ports"]}
    assert {"_rms_kernel", "rms_norm_forward"} <= ports


@pytest.mark.parametrize("text, expected", [
    ('[[anchor]]\nports = "k:a.py::f"\n', "needs tree"),
    ('[[anchor]]\ntree = "a.py::f"\nports = "not a reference"\n', "expected UPSTREAM:PATH::SYMBOL"),
    ('[[anchor]]\ntree = "a.py::f"\nports = "k:a.py::f"\nat = "zz"\n', "expected a commit SHA"),
    ('[[anchor]]\ntree = "a.py"\nports = "k:a.py::f"\n', "expected FILE::NAME"),
    ('[[anchor]]\ntree = "../a.py::f"\nports = "k:a.py::f"\n', "expected FILE::NAME"),
    ('[[anchor]]\ntree = "a.py::f"\nports = "k:a.py::f"\nwhy = "x"\n', "unknown key 'why'"),
    ('[[ported]]\n', "unknown table 'ported'"),
    ('[[anchor]\n', "invalid TOML"),
])
def test_malformed_entries_are_one_line_errors_naming_the_line(text, expected):
    with pytest.raises(ConfigError) as error:
        parse_sidecar(text, "anchors.toml")
    assert expected in str(error.value) and "\n" not in str(error.value)
    assert str(error.value).startswith("anchors.toml")


def test_render_then_parse_round_trips():
    entries = [
        SidecarEntry(PORTS, "k", "src/a.py", "f", 0, "x/a.py", "f", pin="abcdef1"),
        SidecarEntry(NOT_CARRIED, "k", "src/a.py", "g", 0, param="flag", reason='says "no"'),
    ]
    parsed = parse_sidecar(render_sidecar(entries, header="made by hand"), "s.toml")
    assert [(e.kind, e.reference, e.tree, e.pin, e.reason) for e in parsed.entries] == [
        (PORTS, "k:src/a.py::f", "x/a.py::f", "abcdef1", None),
        (NOT_CARRIED, "k:src/a.py::g[flag]", None, None, 'says "no"'),
    ]


def test_portq_toml_names_the_sidecar_and_the_matrix_command_reads_it(tmp_path: Path):
    (tmp_path / "norms").mkdir()
    (tmp_path / "norms" / "rms_norm.py").write_text(VENDORED)
    (tmp_path / "anchors.toml").write_text(SIDECAR + '\n[[anchor]]\ntree = "norms/rms_norm.py::nope"\nports = "kernlib:src/ops/rms_norm.py::nope"\n')
    (tmp_path / "m.toml").write_text(MATRIX)
    (tmp_path / "portq.toml").write_text('matrix = "m.toml"\nanchors = "anchors.toml"\n')
    assert load_config(cwd=tmp_path).anchors_path == (tmp_path / "anchors.toml").resolve()
    result = subprocess.run([sys.executable, "-m", "portq.cli", "matrix", "--json"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert '"sidecar-unresolved"' in result.stdout and "rms_norm_forward" in result.stdout


def test_a_missing_sidecar_file_is_one_line_exit_2(tmp_path: Path):
    (tmp_path / "m.toml").write_text(MATRIX)
    (tmp_path / "portq.toml").write_text('matrix = "m.toml"\nanchors = "missing.toml"\n')
    result = subprocess.run([sys.executable, "-m", "portq.cli", "matrix"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"portq: error: anchors file {(tmp_path / 'missing.toml').resolve()} does not exist: "
        "write it, or remove 'anchors' from portq.toml"]
