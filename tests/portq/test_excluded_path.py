"""A path the port's assertion excludes (issue 24, the twenty-third held-out split; ``excluded-path``).

A host function whose grid is written the same before and after, where the
old side reassigned one of the grid's inputs in an ``if`` (an input shape the
function used to accept and reshape), and the commit removes that branch: the
grid's value changed only on the removed path. A port whose definition
asserts, before its launch, a condition on the same input under which the
removed branch's condition can never hold never takes that path: its grid is
unaffected, IN_SYNC. A port without that assertion, one whose assertion
leaves the path possible, or a grid whose expression changed too, is
compared as before."""
from __future__ import annotations

from portq.core.model import IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch

from .kernels import scale_kernel
from .util import cdiv, rows_of


def scale_rows(x: torch.Tensor, BLOCK: int) -> torch.Tensor:
    flat = x.dim() == 1
    if flat:
        x = x.unsqueeze(0)

    n = rows_of(x)
    y = torch.empty_like(x)
    scale_kernel[(cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)

    if flat:
        y = y.squeeze(0)
    return y
'''

AFTER = '''import torch

from .kernels import scale_kernel
from .util import cdiv, rows_of


def scale_rows(x: torch.Tensor, BLOCK: int) -> torch.Tensor:
    n = rows_of(x)
    y = torch.empty_like(x)
    scale_kernel[(cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y
'''

PORT = '''import torch
import triton


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_rows
def scale(x, block):
    if x.stride(-1) != 1:
        x = x.contiguous()
    assert x.dim() > 1, "x needs rows"
    rows = x.reshape(-1, x.size(-1))
    n = rows.size(0)
    y = torch.empty_like(rows)
    scale_kernel[(triton.cdiv(n, block),)](rows, y, n, BLOCK=block)
    return y.view(x.shape)
'''


def _host(tmp_path, before, after, port):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x):\n    return scale(x, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "scale_rows")


def test_a_removed_path_the_port_asserts_away_leaves_its_grid_in_sync(tmp_path):
    host = _host(tmp_path, BEFORE, AFTER, PORT)
    assert host.verdict == IN_SYNC, host.reason
    assert "excluded-path" in host.rules
    assert "x.dim() > 1" in host.reason


def test_a_port_without_the_assertion_is_compared(tmp_path):
    port = PORT.replace('    assert x.dim() > 1, "x needs rows"\n', "")
    host = _host(tmp_path, BEFORE, AFTER, port)
    assert "excluded-path" not in host.rules, host.reason
    assert host.verdict != IN_SYNC


def test_an_assertion_that_leaves_the_path_possible_is_compared(tmp_path):
    port = PORT.replace("assert x.dim() > 1", "assert x.dim() >= 1")
    host = _host(tmp_path, BEFORE, AFTER, port)
    assert "excluded-path" not in host.rules, host.reason
    assert host.verdict != IN_SYNC


def test_an_assertion_on_another_input_is_compared(tmp_path):
    port = PORT.replace("assert x.dim() > 1", "assert block > 1")
    host = _host(tmp_path, BEFORE, AFTER, port)
    assert "excluded-path" not in host.rules, host.reason
    assert host.verdict != IN_SYNC


def test_a_grid_whose_expression_changed_too_is_compared(tmp_path):
    after = AFTER.replace("scale_kernel[(cdiv(n, BLOCK),)]", "scale_kernel[(cdiv(n, 2 * BLOCK),)]")
    host = _host(tmp_path, BEFORE, after, PORT)
    assert "excluded-path" not in host.rules, host.reason
    assert host.verdict != IN_SYNC


def test_a_port_that_reshapes_the_input_before_its_assertion_is_compared(tmp_path):
    # The port takes the path itself (a one-dimensional input made two-dimensional) before asserting:
    # its assertion no longer says which inputs it accepts.
    port = PORT.replace('    assert x.dim() > 1, "x needs rows"\n',
                        '    if x.dim() == 1:\n        x = x.unsqueeze(0)\n    assert x.dim() > 1, "x needs rows"\n')
    host = _host(tmp_path, BEFORE, AFTER, port)
    assert "excluded-path" not in host.rules, host.reason
    assert host.verdict != IN_SYNC
