"""The port already has it (issue 24, class 8; ``port-has-change``).

A body change whose every touched statement, in its new form, is a statement
of the port (the same target, the same tokens modulo a consistent renaming of
the names the commit did not touch, the touched tokens verbatim) while its old
form is not, leaves the port in sync: IN_SYNC, citing the port's lines. One
touched statement the port does not have, or an old form the port has too,
leaves the change for a reader."""
from __future__ import annotations

from portq.core.model import IN_SYNC, NEEDS_REVIEW
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch


def norm_fwd(x, is_rms):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty((M,), dtype=torch.float32, device="cuda") if not is_rms else None
    rstd = torch.empty((M,), dtype=torch.float32, device="cuda")
    _kernel[(M,)](x, y, mean, rstd, N)
    return y, mean, rstd
'''

AFTER = BEFORE.replace('device="cuda"', "device=x.device")

PORT = '''import torch


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::norm_fwd
def forward(x, is_rms):
    rows, n = x.shape
    y = torch.empty_like(x)
    mean = None if is_rms else torch.empty((rows,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)
    _rows_kernel[(rows,)](x, y, mean, rstd, n)
    return y, mean, rstd
'''


def _symbol(tmp_path, before, after, port):
    tree = {"kernels/mla_prefix/norm.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.norm import forward\n\n\n"
                                            "def apply(x):\n    return forward(x, True)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "norm_fwd")


def test_statements_whose_new_form_the_port_has_are_in_sync(tmp_path):
    symbol = _symbol(tmp_path, BEFORE, AFTER, PORT)
    assert symbol.verdict == IN_SYNC, symbol.reason
    assert "port-has-change" in symbol.rules
    assert "norm.py:" in symbol.reason


def test_a_touched_statement_the_port_lacks_needs_review(tmp_path):
    after = AFTER.replace("    return y, mean, rstd", "    y = y * 2\n    return y, mean, rstd")
    symbol = _symbol(tmp_path, BEFORE, after, PORT)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "port-has-change" not in symbol.rules


def test_a_touched_token_the_port_spells_otherwise_needs_review(tmp_path):
    port = PORT.replace("rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)",
                        "rstd = torch.empty((rows,), dtype=torch.float32, device=y.device)")
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_a_port_that_has_the_old_form_needs_review(tmp_path):
    port = PORT.replace('rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)',
                        'rstd = torch.empty((rows,), dtype=torch.float32, device="cuda")')
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "port-has-change" not in symbol.rules


def test_a_renaming_must_be_consistent_across_the_touched_statements(tmp_path):
    port = PORT.replace("rstd = torch.empty((rows,)", "rstd = torch.empty((n,)")
    symbol = _symbol(tmp_path, BEFORE, AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


RSTD_ONLY = BEFORE.replace('rstd = torch.empty((M,), dtype=torch.float32, device="cuda")',
                           "rstd = torch.empty((M,), dtype=torch.float32, device=x.device)")


def test_one_touched_statement_the_port_has_is_in_sync(tmp_path):
    symbol = _symbol(tmp_path, BEFORE, RSTD_ONLY, PORT)
    assert symbol.verdict == IN_SYNC, symbol.reason


def test_a_keyword_the_port_names_otherwise_is_not_a_renaming(tmp_path):
    port = PORT.replace("rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)",
                        "rstd = torch.empty((rows,), layout=torch.float32, device=x.device)")
    symbol = _symbol(tmp_path, BEFORE, RSTD_ONLY, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_a_called_function_the_port_names_otherwise_is_not_a_renaming(tmp_path):
    port = PORT.replace("rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)",
                        "rstd = zeros((rows,), dtype=torch.float32, device=x.device)")
    before = BEFORE.replace('rstd = torch.empty((M,)', 'rstd = empty((M,)')
    after = RSTD_ONLY.replace('rstd = torch.empty((M,)', 'rstd = empty((M,)')
    symbol = _symbol(tmp_path, before, after, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
