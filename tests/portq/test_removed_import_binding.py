"""An import removed together with every use of it in its module (docs/tricky-cases.md,
"an import removed with its readers"): ``from .modes import Mode`` goes, and the ported host's
only reading of ``Mode`` (an annotation) goes with it. The new module never names ``Mode``, so every
definition of the module that read it is changed by the same commit and compared in its own right;
the import names an object that lives on in the module it came from, so its removal changes no
value anything reads (``removed-import-use``). An import the new module still names, one rebound
to another module, or one removed while another module-level line changes too stays flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, then the edit
(entry 1)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "ROWS"
title    = "Row scaling"
upstream = "vllm"
paths    = ["ops/*.py", "ops/**/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

MODES = '''\
import enum


class Mode(enum.Enum):
    fast = "fast"
    exact = "exact"
'''

BASE = '''\
import torch
import triton
import triton.language as tl

from .modes import Mode


@triton.jit
def _scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)


def scale(x: torch.Tensor, mode: Mode, block: int) -> torch.Tensor:
    _scale_kernel[(triton.cdiv(x.numel(), block),)](x, x.numel(), BLOCK=block)
    return x
'''

EDIT = BASE.replace("from .modes import Mode\n", "").replace("mode: Mode,", "mode: str,")

PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/rows/__init__.py::_scale_kernel
@triton.jit
def double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)


# portq: ports vllm:ops/rows/__init__.py::scale
def double(x, mode, block):
    double_kernel[(triton.cdiv(x.numel(), block),)](x, x.numel(), BLOCK=block)
    return x
'''

ENGINE = "from kernels.rows import double\n\n\ndef step(x):\n    return double(x, None, 256)\n"


def _edit(tmp_path, before, after):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows/__init__.py": before, "ops/rows/modes.py": MODES}),
        CommitSpec("edit", files={"ops/rows/__init__.py": after}),
    ], {"kernels/rows.py": PORT, "engine/step.py": ENGINE}, matrix=MATRIX)
    return verdicts[1]


def _module(verdict):
    return next(s for s in verdict.symbols if s.symbol == "<toplevel>")


def test_an_import_removed_with_every_reader_is_decided_with_the_readers(tmp_path):
    module = _module(_edit(tmp_path, BASE, EDIT))
    assert (module.verdict, module.justification, module.rules) == \
        (NOT_APPLICABLE, "not-ported", ["removed-import-use"]), module.reason
    assert "Mode" in module.reason and "scale" in module.reason


def test_one_name_of_an_import_removed_with_its_readers_is_decided_with_them(tmp_path):
    before = BASE.replace("from .modes import Mode\n", "from .modes import Mode, fallback\n") \
        .replace("    return x\n", "    return fallback(x)\n")
    after = EDIT.replace("    return x\n", "    return fallback(x)\n").replace(
        "import triton.language as tl\n\n", "import triton.language as tl\n\nfrom .modes import fallback\n")
    module = _module(_edit(tmp_path, before, after))
    assert (module.verdict, module.rules) == (NOT_APPLICABLE, ["removed-import-use"]), module.reason


def test_an_import_the_new_module_still_names_is_flagged(tmp_path):
    after = EDIT.replace("    return x\n", "    return x if Mode else None\n")
    module = _module(_edit(tmp_path, BASE, after))
    assert module.verdict in FLAGGED, module.reason
    assert "removed-import-use" not in module.rules


def test_an_import_rebound_to_another_module_is_flagged(tmp_path):
    after = BASE.replace("from .modes import Mode\n", "from .other_modes import Mode\n")
    module = _module(_edit(tmp_path, BASE, after))
    assert module.verdict in FLAGGED, module.reason
    assert "removed-import-use" not in module.rules


def test_an_import_removed_while_a_read_constant_changes_is_flagged(tmp_path):
    before = BASE.replace("from .modes import Mode\n", "from .modes import Mode\n\nSCALE = 2\n") \
        .replace("x * 2", "x * SCALE")
    after = before.replace("from .modes import Mode\n", "").replace("mode: Mode,", "mode: str,") \
        .replace("SCALE = 2", "SCALE = 3")
    module = _module(_edit(tmp_path, before, after))
    assert module.verdict in FLAGGED, module.reason
    assert "removed-import-use" not in module.rules


UNPACKING = '''\


def pad(x):
    return x, *[None] * 2
'''


def test_a_module_the_grammar_misreads_elsewhere_is_read_once_python_confirms_its_imports(tmp_path):
    module = _module(_edit(tmp_path, BASE + UNPACKING, EDIT + UNPACKING))
    assert (module.verdict, module.rules) == (NOT_APPLICABLE, ["removed-import-use"]), module.reason


def test_a_module_python_cannot_parse_is_flagged(tmp_path):
    broken = UNPACKING.replace("return x, *[None] * 2", "return x, *[None] * 2 +")
    module = _module(_edit(tmp_path, BASE + broken, EDIT + broken))
    assert module.verdict in FLAGGED, module.reason
    assert "removed-import-use" not in module.rules
