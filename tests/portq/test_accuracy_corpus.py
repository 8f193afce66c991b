"""The labelled accuracy corpus (examples/accuracy/, docs/accuracy.md) is well
formed, and its scoring script says so plainly when an upstream has no clone.

CI has no upstream clones, so nothing here scans the corpus;
``benchmarks/accuracy.py`` scores it where clones exist. A vendored port's
committed part is checked here; how its upstream files are written and pinned
at scoring time is checked against a tiny upstream these tests build.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from portq.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "benchmarks" / "accuracy.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("accuracy_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


accuracy = _load_script()
PORTS = accuracy.load_corpus()
CONFIG = REPO_ROOT / "portq.toml"


def _clone_of(port):
    """The port's upstream clone named by portq.toml, where it exists (never in CI)."""
    clone = accuracy.default_clone(CONFIG, port.upstream)
    return clone if clone is not None and accuracy.is_git_clone(clone) else None


def test_corpus_has_the_three_kinds_of_port():
    kinds = {port.name: port.kind for port in PORTS}
    assert len(PORTS) >= 3, kinds
    assert any("close" in kind for kind in kinds.values()), kinds
    assert any("re-implementation" in kind for kind in kinds.values()), kinds
    assert any("cross-language" in kind for kind in kinds.values()), kinds


@pytest.mark.parametrize("port", PORTS, ids=lambda p: p.name)
def test_matrix_loads_and_every_anchor_resolves_in_the_port_tree(port, capsys, tmp_path):
    if port.vendor is not None and _clone_of(port) is None:
        pytest.skip(f"no {port.upstream} clone to write the vendored files from (the committed part is checked below)")
    code = main([
        "matrix", "--json",
        "--tree", str(accuracy.port_tree(port, tmp_path, _clone_of(port))),
        "--matrix", str(port.matrix),
        "--ledger", str(tmp_path / "ledger.sqlite"),
    ])
    page = json.loads(capsys.readouterr().out)
    assert code == 0
    # A vendored copy brings upstream definitions no test of the tree reaches; nothing else may be wrong.
    allowed = {"port-without-test"} if port.vendor is not None else set()
    assert [p for p in page["problems"] if p["kind"] not in allowed] == []
    ports = [p for row in page["rows"] for p in row["ports"]]
    assert ports, f"{port.name}: no ports anchor in the tree"
    for anchored in ports:
        assert anchored["definition"], anchored
        assert anchored["anchor"].startswith(f"{port.upstream}:"), anchored
        if port.vendor is not None:
            assert anchored["pin"] == port.vendor.base, anchored
    if port.tree_without:
        # A test-only variant: nothing but its tests reaches the port.
        assert not any(p["non_test_callers"] for p in ports), ports
    elif port.vendor is not None:
        # A vendored copy is reached the way its users reach upstream: nn.Module
        # instances and autograd Function.apply, which call forward implicitly.
        # That the engine imports the copy is checked on the committed part.
        pass
    else:
        # Reachability is real: an engine module calls some port, not only tests.
        assert any(p["non_test_callers"] for p in ports), ports


@pytest.mark.parametrize("port", PORTS, ids=lambda p: p.name)
def test_every_label_has_a_verdict_from_the_vocabulary_and_a_reason(port):
    # load_corpus already rejects a malformed label; check what it returned.
    assert port.labels
    for label in port.labels:
        assert label.verdict in accuracy.VERDICTS
        assert (label.justification in accuracy.JUSTIFICATIONS) == (label.verdict == "NOT_APPLICABLE")
        assert label.reason
    # A range is worth scoring only if it has something to flag.
    assert any(label.verdict in accuracy.FLAGGED for label in port.labels), port.name


VENDORED = [p for p in PORTS if p.vendor is not None]


@pytest.mark.parametrize("port", VENDORED, ids=lambda p: p.name)
def test_a_vendored_port_commits_its_caller_but_no_upstream_code(port):
    matrix = accuracy.tomllib.loads(port.matrix.read_text())
    (row,) = matrix["row"]
    targets = [target for _, target in port.vendor.files]
    # load_port already refused a committed copy; the matrix must own what is copied.
    assert {source for source, _ in port.vendor.files} <= set(row["paths"]), row["paths"]
    for target in targets:
        assert not (port.directory / target).exists()
        assert any(target.startswith(prefix) for prefix in row["tree"]), (target, row["tree"])
    # The tree's own code imports (Python) or includes (C/C++/CUDA) some
    # vendored file, so the copy is reachable once written.
    modules = {Path(t).with_suffix("").as_posix().replace("/", ".") for t in targets}
    own_code = [p for p in port.directory.rglob("*") if p.suffix in (".py", ".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp")
                and "tests" not in p.relative_to(port.directory).parts]
    engine = "\n".join(p.read_text() for p in own_code)
    assert any(m.rpartition(".")[2] in engine for m in modules), modules
    # Nothing committed carries an anchor of its own: the pins are all written at scoring time.
    for path in port.directory.rglob("*.py"):
        assert "portq: ports" not in path.read_text(), path


@pytest.mark.parametrize("port", [p for p in PORTS if p.tree_from], ids=lambda p: p.name)
def test_a_variant_port_is_the_other_tree_less_its_drops_plus_its_own_files(port, tmp_path):
    tree = accuracy.port_tree(port, tmp_path)
    base = port.directory.parent / port.tree_from
    own = [p for p in port.directory.rglob("*") if p.suffix in (".py", ".cu", ".cpp")]
    assert own or port.tree_without, f"{port.name} changes nothing of {port.tree_from}"
    for path in own:
        assert (tree / path.relative_to(port.directory)).read_text() == path.read_text()
    for dropped in port.tree_without:
        assert (base / dropped).exists() and not (tree / dropped).exists()
    assert not (tree / "labels.toml").exists()


def test_a_variant_dropping_what_its_base_lacks_is_rejected(tmp_path):
    directory = _write_port(tmp_path, '[[entry]]\nsha = "abcdef1"\nverdict = "IN_SYNC"\nreason = "r"\n')
    (directory.parent / "base").mkdir()
    (directory.parent / "base" / "labels.toml").write_text("")
    labels = directory / "labels.toml"
    labels.write_text(labels.read_text().replace('range = "a..b"\n', 'range = "a..b"\ntree_from = "base"\ntree_without = ["engine"]\n'))
    port = accuracy.load_port(directory)
    with pytest.raises(accuracy.CorpusError, match="tree_without 'engine': not in base's tree"):
        accuracy.port_tree(port, tmp_path / "work")


def _write_port(root: Path, body: str) -> Path:
    directory = root / "p"
    directory.mkdir()
    (directory / "labels.toml").write_text(
        'port = "p"\nkind = "k"\nupstream = "aiter"\nrange = "a..b"\n' + body
    )
    return directory


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('sha = "abcdef1"\nverdict = "GAP"\nreason = "r"', "verdict = 'GAP'"),
        ('sha = "abcdef1"\nverdict = "NOT_APPLICABLE"\nreason = "r"', "justification = None"),
        ('sha = "abcdef1"\nverdict = "IN_SYNC"\njustification = "no-row"\nreason = "r"', "only NOT_APPLICABLE"),
        ('sha = "abcdef1"\nverdict = "IN_SYNC"\nreason = " "', "reason missing"),
        ('sha = "XYZ"\nverdict = "IN_SYNC"\nreason = "r"', "sha = 'XYZ'"),
    ],
)
def test_a_malformed_label_is_rejected_with_its_entry(tmp_path, entry, message):
    directory = _write_port(tmp_path, f"[[entry]]\n{entry}\n")
    with pytest.raises(accuracy.CorpusError, match="entry 1") as raised:
        accuracy.load_port(directory)
    assert message in str(raised.value)


def test_a_sha_labelled_twice_is_rejected(tmp_path):
    one = '[[entry]]\nsha = "abcdef1"\nverdict = "IN_SYNC"\nreason = "r"\n'
    directory = _write_port(tmp_path, one + one)
    with pytest.raises(accuracy.CorpusError, match="labelled twice"):
        accuracy.load_port(directory)


def test_scores_count_flagged_and_real_gap_from_both_sides():
    label = lambda verdict: accuracy.Label("abcdef1", "", verdict, None, "r")  # noqa: E731
    outcomes = [
        accuracy.Outcome("p", label("REAL_GAP"), "REAL_GAP", None, 1),
        accuracy.Outcome("p", label("NEEDS_REVIEW"), "REAL_GAP", None, 2),
        accuracy.Outcome("p", label("IN_SYNC"), "NEEDS_REVIEW", None, 3),
        accuracy.Outcome("p", label("NEEDS_REVIEW"), "NOT_APPLICABLE", "no-row", 4),
    ]
    scores = accuracy.score(outcomes)
    assert scores["flagged"] == {"tool": 3, "labelled": 3, "both": 2, "precision": 2 / 3, "recall": 2 / 3}
    assert scores["real_gap"] == {"tool": 2, "labelled": 1, "both": 1, "precision": 0.5, "recall": 1.0}
    assert scores["confusion"][("NEEDS_REVIEW", "REAL_GAP")] == 1


def _run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=REPO_ROOT)


def test_script_skips_cleanly_without_a_clone(tmp_path):
    config = tmp_path / "portq.toml"
    config.write_text('[upstream.aiter]\npath = "no-aiter-here"\n')
    result = _run_script("--config", str(config))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: no aiter clone at ")
    assert str(tmp_path / "no-aiter-here") in result.stdout
    assert "Scores" not in result.stdout


def test_script_rejects_an_aiter_path_that_is_not_a_clone(tmp_path):
    result = _run_script("--aiter", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == f"accuracy: --aiter {tmp_path}: expected a git clone of github.com/ROCm/aiter"


def test_script_rejects_an_unknown_port():
    result = _run_script("--port", "nope")
    assert result.returncode == 2
    assert "--port nope: expected one of" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_script_stops_with_one_line_when_the_clone_lacks_a_range(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = _run_script("--aiter", str(tmp_path), "--port", "gemm_copy")  # other upstreams would print skip lines
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown revision" in lines[0], result.stderr


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


TINY_PY = """\
\"\"\"A tiny upstream module.\"\"\"
import triton

SCALE = 2


@triton.jit
def _double_kernel(x_ptr, n):
    pass


def double(x):
    def helper(y):
        return y
    return helper(x) * SCALE


class DoubleFunction:
    @staticmethod
    def forward(ctx, x):
        return double(x)

    def backward(self, g):
        return g
"""

TINY_CU = """\
#include <cstdint>

__global__ void double_kernel(float* x, int64_t n) {
  x[0] *= 2;
}

template <typename T>
void launch_double(T* x, int64_t n) {
  double_kernel<<<1, 1>>>(x, n);
}
"""


def _tiny_upstream(root: Path) -> tuple[Path, str, str]:
    """A two-commit upstream: the base with a Python and a CUDA file, then one change."""
    clone = root / "up"
    (clone / "lib").mkdir(parents=True)
    _git(clone.parent, "init", "-q", clone.name)
    (clone / "lib" / "double.py").write_text(TINY_PY)
    (clone / "lib" / "double.cu").write_text(TINY_CU)
    _git(clone, "add", ".")
    _git(clone, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "base")
    base = _git(clone, "rev-parse", "HEAD")
    (clone / "lib" / "double.py").write_text(TINY_PY.replace("return helper(x) * SCALE", "return helper(x) * SCALE + 0"))
    _git(clone, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-am", "change double's body")
    return clone, base, _git(clone, "rev-parse", "HEAD")


def _vendored_port(root: Path, base: str, end: str) -> Path:
    directory = root / "corpus" / "tiny_vendored"
    (directory / "engine").mkdir(parents=True)
    (directory / "tests").mkdir()
    (directory / "tests" / "test_run.py").write_text("from engine.run import run\n\n\ndef test_run():\n    assert run(1) == 2\n")
    (directory / "engine" / "__init__.py").write_text("")
    (directory / "engine" / "run.py").write_text(
        "from .third_party.up import double as up_double\n\n\ndef run(x):\n    return up_double.double(x)\n"
    )
    (directory / "kernel-matrix.toml").write_text(
        '[[row]]\nid = "DOUBLE"\ntitle = "t"\nupstream = "up"\npaths = ["lib/double.py", "lib/double.cu"]\n'
        'tree = ["engine/"]\ntests = ["tests/"]\n'
    )
    (directory / "labels.toml").write_text(
        f'port = "tiny_vendored"\nkind = "vendored copy"\nupstream = "up"\nrange = "{base[:10]}..{end[:10]}"\n'
        f'[vendor]\nbase = "{base[:10]}"\n'
        'files = { "lib/double.py" = "engine/third_party/up/double.py", "lib/double.cu" = "engine/third_party/up/double.cu" }\n'
        f'[[entry]]\nsha = "{end[:10]}"\nverdict = "NEEDS_REVIEW"\nreason = "body-only change to double"\n'
    )
    return directory


def test_a_vendored_tree_is_the_upstream_files_verbatim_plus_one_pin_above_each_definition(tmp_path, capsys):
    clone, base, end = _tiny_upstream(tmp_path)
    port = accuracy.load_port(_vendored_port(tmp_path, base, end))
    assert port.vendor == accuracy.Vendor(base[:10], (
        ("lib/double.py", "engine/third_party/up/double.py"), ("lib/double.cu", "engine/third_party/up/double.cu"),
    ))
    work = tmp_path / "work"
    work.mkdir()
    tree = accuracy.port_tree(port, work, clone)
    pin = f"@{base[:10]}"
    written = (tree / "engine/third_party/up/double.py").read_text()
    anchors = [line for line in written.splitlines() if "portq:" in line]
    assert anchors == [
        f"# portq: ports up:lib/double.py::_double_kernel {pin}",
        f"# portq: ports up:lib/double.py::double {pin}",
        f"    # portq: ports up:lib/double.py::DoubleFunction.forward {pin}",
        f"    # portq: ports up:lib/double.py::DoubleFunction.backward {pin}",
    ]
    # Each pin sits directly above its decorator stack or def; the rest is upstream's bytes.
    lines = written.splitlines()
    assert lines[lines.index(anchors[0]) + 1] == "@triton.jit"
    assert lines[lines.index(anchors[2]) + 1] == "    @staticmethod"
    assert "\n".join(line for line in lines if "portq:" not in line) + "\n" == TINY_PY
    cuda = (tree / "engine/third_party/up/double.cu").read_text()
    assert [line for line in cuda.splitlines() if "portq:" in line] == [
        f"// portq: ports up:lib/double.cu::double_kernel {pin}",
        f"// portq: ports up:lib/double.cu::launch_double {pin}",
    ]
    assert cuda.splitlines()[cuda.splitlines().index(f"// portq: ports up:lib/double.cu::launch_double {pin}") + 1] == (
        "template <typename T>"
    )
    assert not (tree / "labels.toml").exists()
    # portq itself reads every written pin as an anchor on the definition below it.
    code = main(["matrix", "--json", "--tree", str(tree), "--matrix", str(port.matrix),
                 "--ledger", str(tmp_path / "ledger.sqlite"), "--upstream", f"up={clone}"])
    page = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {p["kind"] for p in page["problems"]} <= {"port-without-test"}, page["problems"]
    found = {(p["anchor"], p["definition"], p["pin"]) for row in page["rows"] for p in row["ports"]}
    assert ("up:lib/double.py::double", "double", base[:10]) in found, found
    assert ("up:lib/double.py::DoubleFunction.forward", "DoubleFunction.forward", base[:10]) in found, found
    assert len(found) == 6 and {p for _, _, p in found} == {base[:10]}, found


def test_a_vendored_port_is_scanned_against_its_materialised_tree(tmp_path):
    clone, base, end = _tiny_upstream(tmp_path)
    port = accuracy.load_port(_vendored_port(tmp_path, base, end))
    work = tmp_path / "work"
    work.mkdir()
    (outcome,) = accuracy.join(port, accuracy.scan(port, clone, work))
    assert outcome.label.sha == end[:10]
    # The change touches the pinned copy of double, so portq does not call it unrelated to the tree.
    assert (outcome.verdict, outcome.justification) != ("NOT_APPLICABLE", "no-row")


def test_a_vendored_file_the_clone_lacks_at_base_stops_with_one_line(tmp_path):
    clone, base, end = _tiny_upstream(tmp_path)
    directory = _vendored_port(tmp_path, base, end)
    labels = directory / "labels.toml"
    labels.write_text(labels.read_text().replace('"lib/double.cu" =', '"lib/gone.cu" ='))
    port = accuracy.load_port(directory)
    with pytest.raises(accuracy.CorpusError, match=r"tiny_vendored: \[vendor\] lib/gone.cu at"):
        accuracy.port_tree(port, tmp_path / "work", clone)
    with pytest.raises(accuracy.CorpusError, match="needs a clone of up"):
        accuracy.port_tree(port, tmp_path / "work")


@pytest.mark.parametrize(
    ("vendor", "message"),
    [
        ('base = "nothex"\nfiles = { "a.py" = "e/a.py" }', "base = 'nothex'"),
        ('base = "abcdef1234"\nfiles = { "a.py" = "e/a.py" }', "expected the range's first commit"),
        ('base = "{base}"\nfiles = {}', "files = {}"),
        ('base = "{base}"\nfiles = { "a.py" = "../a.py" }', "expected two relative paths"),
        ('base = "{base}"\nfiles = { "a.txt" = "e/a.txt" }', "expected a Python or C/C++/CUDA file"),
        ('base = "{base}"\nfiles = { "a.py" = "e/a.py", "b.py" = "e/a.py" }', "is the copy of two upstream files"),
        ('base = "{base}"\nfiles = { "a.py" = "engine/run.py" }', "is committed: expected it written from the clone only"),
    ],
)
def test_a_malformed_vendor_table_is_rejected(tmp_path, vendor, message):
    base, end = "a" * 10, "b" * 10
    directory = _vendored_port(tmp_path, base, end)
    labels = directory / "labels.toml"
    head, _, entries = labels.read_text().partition("[[entry]]")
    head = head[: head.index("[vendor]")] + "[vendor]\n" + vendor.replace("{base}", base) + "\n"
    labels.write_text(head + "[[entry]]" + entries)
    with pytest.raises(accuracy.CorpusError, match="vendor") as raised:
        accuracy.load_port(directory)
    assert message in str(raised.value)


def _ports_named(*names: str) -> list:
    return [accuracy.Port(name, Path(name), "k", "up", "a..b") for name in names]


def test_held_out_ports_are_scored_only_with_held_out_and_then_alone():
    corpus = _ports_named("a_reimpl", "b_heldout", "c_vendored")
    chosen = lambda *argv: [p.name for p in accuracy.chosen_ports(accuracy.parse_args(list(argv)), corpus)]  # noqa: E731
    assert chosen() == ["a_reimpl", "c_vendored"]
    assert chosen("--held-out") == ["b_heldout"]
    assert chosen("--held-out", "--port", "b_heldout") == ["b_heldout"]
    with pytest.raises(accuracy.CorpusError, match="--port b_heldout: is held out: add --held-out"):
        chosen("--port", "b_heldout")
    with pytest.raises(accuracy.CorpusError, match="--port a_reimpl: is not held out"):
        chosen("--held-out", "--port", "a_reimpl")


def test_script_skips_every_upstream_without_a_clone_one_line_each(tmp_path):
    config = tmp_path / "portq.toml"
    config.write_text('[upstream.aiter]\npath = "no-aiter-here"\n')
    for split in ((), ("--held-out",)):
        result = _run_script("--config", str(config), *split)
        assert result.returncode == 0, result.stderr
        upstreams = sorted({p.upstream for p in PORTS if p.held_out == bool(split)})
        lines = result.stdout.strip().splitlines()
        assert [line.split()[2] for line in lines] == upstreams, result.stdout
        assert all(line.startswith("skipped: no ") and "--upstream" in line for line in lines)
        assert "Scores" not in result.stdout


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("aiter", "--upstream aiter: expected NAME=PATH"),
        ("nope={tmp}", "--upstream nope={tmp}: expected an upstream of the corpus ("),
        ("aiter={tmp}", "--upstream aiter={tmp}: expected a git clone of the aiter upstream"),
    ],
)
def test_script_rejects_a_bad_upstream_with_one_line(tmp_path, argument, message):
    result = _run_script("--upstream", argument.format(tmp=tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("accuracy: " + message.format(tmp=tmp_path)), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


SPECIALISED_CU = """\
template <typename T>
struct Scratch;

template <>
struct Scratch <float> {
    __device__ float* get() {
        extern __shared__ float s_float[];
        return s_float;
    }
};

__global__ void fill(float* out) {
    out[threadIdx.x] = Scratch<float>().get()[0];
}
"""


def test_a_pinned_copy_leaves_unpinned_a_definition_no_anchor_can_name():
    # A method of an explicit specialisation is named with a space ("Scratch <float>::get"),
    # which an anchor cannot spell: a vendoring project could not pin it either.
    written = accuracy.pinned_copy(SPECIALISED_CU.encode(), "lib/scratch.cu", "up", "abcdef1234").decode()
    assert [line.strip() for line in written.splitlines() if "portq:" in line] == [
        "// portq: ports up:lib/scratch.cu::fill @abcdef1234",
    ]
    assert "\n".join(line for line in written.splitlines() if "portq:" not in line) + "\n" == SPECIALISED_CU
