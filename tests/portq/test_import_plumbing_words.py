"""Module-level import plumbing that only unported code reads (``toplevel-use``): ``from pkg.sub import
ext`` binds ``ext`` alone, so the package path's words (``rowcheck``) are no use of the module the ported
kernel reads; the words inside a plain string literal (a log message) name no binding either. An
``import pkg.sub`` line binds ``pkg`` and stays tied to ported code that reads ``pkg``.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module().replace("import torch\n", "import torch\nimport rowcheck\n").replace(
    "    y = torch.empty_like(x)\n", "    rowcheck.validate(x)\n    y = torch.empty_like(x)\n")
PLUMBING = '''

try:
    from rowcheck.tools import extra_ops
    HAS_EXTRA = True
except ImportError:
    print("rowcheck tools are missing, the extra ops stay off")
    HAS_EXTRA = False


def extra_norm(x):
    return extra_ops.norm(x) if HAS_EXTRA else x
'''


def _verdict(tmp_path, after):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("plumbing", files={"ops/norm.py": after}),
    ], TREE, matrix=MATRIX)
    return verdicts[1]


def test_import_plumbing_only_an_unported_definition_reads_is_not_ported(tmp_path):
    verdict = _verdict(tmp_path, BASE + PLUMBING)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason


def test_an_import_binding_a_package_the_port_reads_is_still_flagged(tmp_path):
    verdict = _verdict(tmp_path, BASE + PLUMBING.replace("    from rowcheck.tools import extra_ops\n",
                                                         "    import rowcheck.tools\n    extra_ops = None\n"))
    assert verdict.verdict in FLAGGED, verdict.reason
