"""A prototype put back exactly as it stood at the commit the port pins (rule ``restored-prototype``).

A binding file loses its binding and the prototype of the host function the binding calls; a later commit
adds them back, text for text as at the commit the port's anchors pin, beside a sibling binding nobody
ports. The prototype is a line outside definitions naming what the ported binding uses, but it states
exactly the interface the port mirrors (the port reflects the pinned commit): the port already has it,
IN_SYNC. Unsound neighbours stay flagged: a prototype put back with another parameter list, and an anchor
that pins nothing (what the port reflects is then unknown).

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import MATRIX_WITH_NORM

PATH = "csrc/norm/binding.cpp"
TOP = "#include <torch/extension.h>\n\n"
PROTO = "void scale_cuda(\n  torch::Tensor x, torch::Tensor y,\n  float s\n);\n\n"
BINDING = "void scale(torch::Tensor x, torch::Tensor y, float s) {\n  scale_cuda(x, y, s);\n}\n\n"
SIBLING = ("void shift_cuda(torch::Tensor x, torch::Tensor y, float s);\n\n"
           "void shift(torch::Tensor x, torch::Tensor y, float s) {\n  shift_cuda(x, y, s);\n}\n\n")
OTHER = ("void scale4_cuda(torch::Tensor x, torch::Tensor y, torch::Tensor s);\n\n"
         "void scale4(torch::Tensor x, torch::Tensor y, torch::Tensor s) {\n  scale4_cuda(x, y, s);\n}\n\n")


def _module(*defs: str, names=("scale",)) -> str:
    return TOP + "".join(defs) + "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n" + "".join(
        f'  m.def("{n}", &{n}, "{n}");\n' for n in names) + "}\n"


BASE = _module(PROTO, BINDING)
GONE = _module(OTHER, names=("scale4",))
BACK = _module(SIBLING, PROTO, BINDING, OTHER, names=("shift", "scale", "scale4"))

PORT = ("# portq: ports vllm:csrc/norm/binding.cpp::scale{pin}\n"
        "def scale(x, y, s):\n    y.copy_(x * s)\n\n\n"
        "def engine(x, y):\n    scale(x, y, 2.0)\n")


def _history(tmp_path, back=BACK, pinned=True):
    commits = [CommitSpec("base", files={PATH: BASE}), CommitSpec("drop the binding", files={PATH: GONE}),
               CommitSpec("bindings back", files={PATH: back})]
    _, shas = classify_history(tmp_path / "first", commits, {"kernels/scale.py": PORT.format(pin="")})
    pin = f" @{shas[0][:10]}" if pinned else ""
    verdicts, _ = classify_history(tmp_path / "pinned", commits, {"kernels/scale.py": PORT.format(pin=pin)})
    return verdicts[2]


def _toplevel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "<toplevel>")


def test_a_prototype_put_back_as_at_the_pinned_commit_is_in_sync(tmp_path):
    verdict = _history(tmp_path)
    top = _toplevel(verdict)
    assert top.verdict == IN_SYNC, top.reason
    assert "restored-prototype" in top.rules, top.rules
    assert verdict.verdict == IN_SYNC, verdict.reason


def test_a_prototype_put_back_with_another_parameter_list_stays_flagged(tmp_path):
    verdict = _history(tmp_path, back=BACK.replace("  float s\n);", "  float s, int n\n);"))
    top = _toplevel(verdict)
    assert top.verdict == NEEDS_REVIEW, top.reason
    assert "restored-prototype" not in top.rules


def test_a_prototype_put_back_for_an_unpinned_port_stays_flagged(tmp_path):
    verdict = _history(tmp_path, pinned=False)
    top = _toplevel(verdict)
    assert top.verdict == NEEDS_REVIEW, top.reason
    assert "restored-prototype" not in top.rules


def test_a_file_deleted_again_after_a_re_add_with_another_interface_is_net_zero_with_the_re_add(tmp_path):
    """The file the port's binding lived in is deleted (flagged: the port still has the binding), put back
    with another interface beside a new kernel file (flagged on its own), and deleted again. The second
    deletion only takes back what the re-add made: over the window from the re-add the file is as it was
    (absent), the port's binding was already reported gone by the first deletion, so the second deletion
    is NOT_APPLICABLE/``net-zero`` (``partial-revert``) and hides nothing the port holds."""
    changed = BASE.replace("float s", "float s, int n").replace("scale_cuda(x, y, s)", "scale_cuda(x, y, s, n)")
    owned = "csrc/norm/row_norm.cu"  # a row owns it
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={owned: BASE}),
        CommitSpec("drop the binding file", files={owned: None}),
        CommitSpec("the binding back, with a length", files={owned: changed, "csrc/norm/row_norm.h": "int k;\n"}),
        CommitSpec("drop the binding file again", files={owned: None}),
    ], {"kernels/scale.py": PORT.format(pin="").replace(PATH, owned)}, matrix=MATRIX_WITH_NORM)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert verdicts[2].verdict in FLAGGED, verdicts[2].reason
    assert (verdicts[3].verdict, verdicts[3].justification) == (NOT_APPLICABLE, "net-zero"), verdicts[3].reason
    assert "partial-revert" in verdicts[3].rules, verdicts[3].rules
