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


# A kernel's store: an expression statement, not an assignment. The touched part (the cast) is compared
# at the same place of the port's one store call, a parameter named at the same position as upstream's.
KERNEL_BEFORE = '''import triton
import triton.language as tl


@triton.jit
def norm_fwd(X, Y, W, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * tl.load(W + cols, mask=mask)
    tl.store(Y + cols, y.to(tl.float16), mask=mask)
'''
KERNEL_AFTER = KERNEL_BEFORE.replace("y.to(tl.float16)", "y.to(Y.dtype.element_ty)")
KERNEL_PORT = '''import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::norm_fwd
@triton.jit
def forward(src, dst, gain, width, TILE: tl.constexpr):
    offs = tl.arange(0, TILE)
    inside = offs < width
    v = tl.load(src + offs, mask=inside, other=0.0).to(tl.float32)
    tl.store(dst + offs, (v * tl.load(gain + offs, mask=inside)).to(dst.dtype.element_ty), mask=inside)
'''


def test_a_store_whose_new_cast_the_port_has_is_in_sync(tmp_path):
    symbol = _symbol(tmp_path, KERNEL_BEFORE, KERNEL_AFTER, KERNEL_PORT)
    assert symbol.verdict == IN_SYNC, symbol.reason
    assert "port-has-change" in symbol.rules
    assert "norm.py:" in symbol.reason


def test_a_store_casting_to_another_pointers_type_needs_review(tmp_path):
    # ``src`` is the port's counterpart of X, not of Y: the same words, another pointer.
    port = KERNEL_PORT.replace(".to(dst.dtype.element_ty)", ".to(src.dtype.element_ty)")
    symbol = _symbol(tmp_path, KERNEL_BEFORE, KERNEL_AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_a_store_the_port_still_casts_the_old_way_needs_review(tmp_path):
    port = KERNEL_PORT.replace(".to(dst.dtype.element_ty)", ".to(tl.float16)")
    symbol = _symbol(tmp_path, KERNEL_BEFORE, KERNEL_AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "port-has-change" not in symbol.rules


def test_a_cast_moved_to_another_argument_needs_review(tmp_path):
    # The port casts where it loads, not where it stores: the same words at another place of the call.
    port = KERNEL_PORT.replace("(v * tl.load(gain + offs, mask=inside)).to(dst.dtype.element_ty), mask=inside)",
                               "v * tl.load(gain + offs, mask=inside), mask=inside, other=dst.dtype.element_ty)")
    symbol = _symbol(tmp_path, KERNEL_BEFORE, KERNEL_AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason


def test_two_stores_in_the_port_the_one_upstream_changed_is_found_by_its_pointer(tmp_path):
    port = KERNEL_PORT + "    tl.store(src + offs, v.to(tl.float16), mask=inside)\n"
    symbol = _symbol(tmp_path, KERNEL_BEFORE, KERNEL_AFTER, port)
    assert symbol.verdict == IN_SYNC, symbol.reason
    # Two stores through the same pointer, one with the old cast: which one upstream's is cannot be told.
    port = KERNEL_PORT + "    tl.store(dst + offs, v.to(tl.float16), mask=inside)\n"
    symbol = _symbol(tmp_path / "ambiguous", KERNEL_BEFORE, KERNEL_AFTER, port)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
