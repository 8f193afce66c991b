"""The port already has it, under its own name for what the statement assigns (issue 24, class 8;
``port-has-renamed-change``).

A touched assignment whose target the port names otherwise (upstream's ``rstd``, the port's ``inv_std``)
is matched to the port's one assignment that reads as its new form, the target renamed with the other
locals (one consistent renaming, each target assigned once on its side), while the old form reads as no
assignment of the port: IN_SYNC, citing the port's statement. A port that lacks the new form, has it only
in another definition, has two such statements, or has the old form too, still needs review."""
from __future__ import annotations

from portq.core.model import IN_SYNC, NEEDS_REVIEW
from tests.portq.test_port_has_change import _symbol  # the same fixture history, tree and caller

BEFORE = '''import torch


def norm_fwd(x, is_rms):
    M, N = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty((M,), dtype=torch.float32, device="cuda")
    _kernel[(M,)](x, y, rstd, N)
    return y, rstd
'''

AFTER = BEFORE.replace('device="cuda"', "device=x.device")

PORT = '''import torch


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::norm_fwd
def forward(x, is_rms):
    rows, n = x.shape
    out = torch.empty_like(x)
    inv_std = torch.empty((rows,), dtype=torch.float32, device=x.device)
    _rows_kernel[(rows,)](x, out, inv_std, n)
    return out, inv_std
'''


def test_a_new_form_the_port_assigns_to_its_own_name_is_in_sync(tmp_path):
    symbol = _symbol(tmp_path, BEFORE, AFTER, PORT)
    assert symbol.verdict == IN_SYNC, symbol.reason
    assert "port-has-renamed-change" in symbol.rules
    assert "norm.py:8" in symbol.reason
    assert "rstd as inv_std" in symbol.reason


def test_a_port_that_lacks_the_new_form_needs_review(tmp_path):
    port = PORT.replace("device=x.device", "device=out.device")
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "port-has-renamed-change" not in symbol.rules


def test_a_port_still_on_the_old_form_needs_review(tmp_path):
    port = PORT.replace("device=x.device", 'device="cuda"')
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_the_new_form_only_in_an_unrelated_definition_needs_review(tmp_path):
    port = PORT.replace("device=x.device", 'device="cuda"') + '''

def scratch(x):
    rows = x.shape[0]
    buf = torch.empty((rows,), dtype=torch.float32, device=x.device)
    return buf
'''
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_a_port_that_has_the_old_form_too_needs_review(tmp_path):
    # Two allocations in the port, one of each form: which one is upstream's cannot be told.
    port = PORT.replace("    _rows_kernel", '    spare = torch.empty((rows,), dtype=torch.float32, device="cuda")\n'
                                           "    _rows_kernel")
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_two_port_statements_with_the_new_form_need_review(tmp_path):
    port = PORT.replace("    _rows_kernel", "    mean = torch.empty((rows,), dtype=torch.float32, device=x.device)\n"
                                           "    _rows_kernel")
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_a_target_the_port_assigns_twice_needs_review(tmp_path):
    port = PORT.replace("    _rows_kernel", "    inv_std = inv_std * 2\n    _rows_kernel")
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason

