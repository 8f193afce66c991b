"""An import whose source module was renamed in the same commit (``renamed-module-import``): the old
module is deleted, and the module the new import reaches (through a package that re-exports it) runs the
old module's program, unchanged once its own relative imports are resolved, docstrings set aside and the
object's name renamed one to one. The ported file binds the same names to the same object, read through
the new name: cosmetic. A new module that computes anything differently, an old module that stays, or a
binding that changes beside the rename stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_absent_platform import BASE, MATRIX, UTILS, _tree

BEFORE = BASE.replace("from ops.utils import cdiv\n", "from ops.utils import cdiv\n\nfrom .runtime.tool import extra_module\n\n"
                      "log = extra_module.log\n").replace("tl.store(out_ptr + row, tl.sum(x))",
                                                          "tl.store(out_ptr + row, log(tl.sum(x)))")
AFTER = BEFORE.replace("from .runtime.tool import extra_module\n", "from .shims import extra_shim\n").replace(
    "log = extra_module.log\n", "log = extra_shim.log\n")

BACKEND = "def pick():\n    return None\n"
TOOL = '''\
import math

from . import backend

extra_module = backend.pick()
if extra_module is None:
    extra_module = math
'''
HELPER = '''\
import math

from ..runtime import backend

"""Picks the math library the kernels read their functions from."""

extra_shim = backend.pick()
if extra_shim is None:
    extra_shim = math
'''
PACKAGE = "from .helper import extra_shim\n\n__all__ = [\"extra_shim\"]\n"


def _edit(tmp_path, after=AFTER, helper=HELPER, keep_old=False):
    common = {"ops/utils.py": UTILS, "ops/runtime/__init__.py": "", "ops/runtime/backend.py": BACKEND}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": BEFORE, "ops/runtime/tool.py": TOOL, **common}),
        CommitSpec("rename", files={"ops/rows.py": after, "ops/runtime/tool.py": TOOL if keep_old else None,
                                    "ops/shims/__init__.py": PACKAGE, "ops/shims/helper.py": helper}),
    ], _tree(), matrix=MATRIX)
    return verdicts[1]


def _toplevel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "<toplevel>" and s.path == "ops/rows.py")


def test_an_import_from_the_renamed_module_is_cosmetic(tmp_path):
    verdict = _edit(tmp_path)
    toplevel = _toplevel(verdict)
    assert (toplevel.verdict, toplevel.justification) == (NOT_APPLICABLE, "cosmetic"), toplevel.reason
    assert "renamed-module-import" in toplevel.rules
    assert "ops/runtime/tool.py" in toplevel.reason and "ops/shims/helper.py" in toplevel.reason, toplevel.reason


def test_a_renamed_module_that_computes_otherwise_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, helper=HELPER.replace("extra_shim = math\n", "extra_shim = None\n"))
    assert _toplevel(verdict).verdict == NEEDS_REVIEW, _toplevel(verdict).reason


def test_an_old_module_that_stays_is_no_rename(tmp_path):
    verdict = _edit(tmp_path, keep_old=True)
    assert _toplevel(verdict).verdict == NEEDS_REVIEW, _toplevel(verdict).reason


def test_a_binding_changed_beside_the_rename_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, after=AFTER.replace("log = extra_shim.log\n", "log = extra_shim.log2\n"))
    assert _toplevel(verdict).verdict == NEEDS_REVIEW, _toplevel(verdict).reason
