"""The own lines of a Python class the tree declares not carried (issue 24; ``declared-python-class-body``).

A Python class declared not carried (whole) and ported nowhere whose own body
lines change (its header and bases, class attributes; upstream deletes the
class) changed the declared class: not-carried, rather than a top-level use
of a base class a ported class shares. The same lines of an undeclared
class keep ``toplevel-use``."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

CLASSES = '''import torch


class Fast(torch.nn.Module):
    width = 32

    def forward(self, x):
        return x * self.width


class Slow(torch.nn.Module):
    def forward(self, x):
        return x + 1
'''

CLASS_PORT = '''# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::Fast -- the other backend


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::Slow
class SlowPort(torch.nn.Module):
    def forward(self, x):
        return x + 1
'''


def _classes(tmp_path, after, port=CLASS_PORT):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: CLASSES}),
                                              CommitSpec("change", files={OPS: after})],
                                   {"kernels/mla_prefix/layer.py": port, "kernels/mla_prefix/caller.py":
                                    "from .layer import SlowPort\n\n\ndef apply(x):\n    return SlowPort()(x)\n"})
    return verdicts[1]


def test_the_removed_lines_of_a_python_class_declared_not_carried_are_not_carried(tmp_path):
    after = CLASSES.replace(CLASSES[CLASSES.index("class Fast"):CLASSES.index("class Slow")], "")
    entry = _classes(tmp_path, after)
    fast = next(s for s in entry.symbols if s.symbol == "Fast")
    assert (fast.verdict, fast.justification) == (NOT_APPLICABLE, "not-carried"), fast.reason
    assert "declared-python-class-body" in fast.rules
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_the_lines_of_an_undeclared_python_class_stay_flagged(tmp_path):
    after = CLASSES.replace(CLASSES[CLASSES.index("class Fast"):CLASSES.index("class Slow")], "")
    entry = _classes(tmp_path, after, port=CLASS_PORT.replace("# portq: not-carried", "# not carried:"))
    fast = next(s for s in entry.symbols if s.symbol == "Fast")
    assert fast.verdict in FLAGGED, fast.reason
    assert "declared-python-class-body" not in fast.rules
