"""An ``elif`` chain read with the port's values (``lacked-branch``): upstream folds an early-returning
``if use_tma: ...; return`` and the ``if``/``else`` after it into one ``if``/``elif``/``else`` chain while
changing only the TMA path. A port that lacks ``use_tma`` and ``exact`` (both default off) runs the
``else`` branch either way: with the first condition false, each ``elif`` condition is decided in turn as
the ``if`` it stands for, so the change lies only in paths the port does not have: NOT_APPLICABLE/not-carried.
A change to the branch the port's defaults take, or to a branch selected by a parameter the port has,
stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "SCALE"
title    = "Row scaling"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""
SOURCE = "ops/scale.py"
KERNELS = '''\
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


@triton.jit
def _exact_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(x_ptr + offs))


@triton.jit
def _tma_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)

'''
BEFORE = KERNELS + '''
def scale(x, out, use_tma=False, exact=False):
    if use_tma:
        _tma_kernel[(1,)](x, out, BLOCK=64)
        return out
    if exact:
        _exact_kernel[(1,)](x, out, BLOCK=128)
    else:
        _scale_kernel[(1,)](x, out, BLOCK=128)
    return out
'''
AFTER = KERNELS + '''
def scale(x, out, use_tma=False, exact=False):
    if use_tma:
        _tma_kernel[(2,)](x, out, BLOCK=128)
    elif exact:
        _exact_kernel[(1,)](x, out, BLOCK=128)
    else:
        _scale_kernel[(1,)](x, out, BLOCK=128)
    return out
'''
PORT = {"kernels/scale.py": (
    "import triton\nimport triton.language as tl\n\n\n"
    f"# portq: ports vllm:{SOURCE}::_scale_kernel\n"
    "@triton.jit\ndef _scale_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)\n\n\n"
    f"# portq: ports vllm:{SOURCE}::scale\n"
    "def scale(x, out):\n    _scale_kernel[(1,)](x, out, BLOCK=128)\n    return out\n")}
PORT_WITH_EXACT = {"kernels/scale.py": PORT["kernels/scale.py"].replace(
    "def scale(x, out):\n    _scale_kernel[(1,)](x, out, BLOCK=128)\n",
    "def scale(x, out, exact=False):\n    if exact:\n        _scale_kernel[(1,)](x + x, out, BLOCK=128)\n"
    "    else:\n        _scale_kernel[(1,)](x, out, BLOCK=128)\n")}


def test_a_change_only_to_the_first_branch_of_an_elif_chain_the_port_lacks_is_not_carried(tmp_path):
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: AFTER}, PORT, MATRIX)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in entry.symbols]
    assert "lacked-branch" in entry.rules, entry.rules


def test_a_change_to_the_branch_the_ports_defaults_take_is_still_flagged(tmp_path):
    after = AFTER.replace("    else:\n        _scale_kernel[(1,)](x, out, BLOCK=128)",
                          "    else:\n        _scale_kernel[(1,)](x, out, BLOCK=256)")
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: after}, PORT, MATRIX)
    assert entry.verdict in FLAGGED, entry.reason


def test_a_change_to_an_elif_branch_a_parameter_the_port_has_selects_is_still_flagged(tmp_path):
    after = AFTER.replace("    elif exact:\n        _exact_kernel[(1,)](x, out, BLOCK=128)",
                          "    elif exact:\n        _exact_kernel[(1,)](x, out, BLOCK=256)")
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: after}, PORT_WITH_EXACT, MATRIX)
    assert entry.verdict in FLAGGED, entry.reason


def test_a_grid_function_defined_inside_the_branch_the_port_lacks_is_not_carried(tmp_path):
    """``lacked-branch-nested``: the nested definition's text is part of the host's, the same for the port."""
    after = AFTER.replace("        _tma_kernel[(2,)](x, out, BLOCK=128)\n",
                          "        def tma_grid(META):\n            return (2,)\n\n"
                          "        _tma_kernel[tma_grid](x, out, BLOCK=128)\n")
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: after}, PORT, MATRIX)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in entry.symbols]
    assert any("tma_grid is defined inside scale" in e.message for e in entry.evidence), entry.evidence


def test_a_grid_function_the_ports_path_uses_is_still_flagged(tmp_path):
    after = AFTER.replace("def scale(x, out, use_tma=False, exact=False):\n",
                          "def scale(x, out, use_tma=False, exact=False):\n    def grid(META):\n"
                          "        return (1,)\n\n").replace("        _scale_kernel[(1,)](x, out, BLOCK=128)",
                                                    "        _scale_kernel[grid](x, out, BLOCK=128)")
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: after}, PORT, MATRIX)
    assert entry.verdict in FLAGGED, entry.reason


# ``lacked-branch-launch``: the host also changes on the port's path (a new local), so it is not the same for
# the port; its TMA launch, in the branch the port never takes, gains an argument.
WITH_DTYPE = AFTER.replace("def scale(x, out, use_tma=False, exact=False):\n",
                           "def _out_dtype():\n    return tl.bfloat16\n\n\n"
                           "def scale(x, out, use_tma=False, exact=False):\n    dtype = _out_dtype()\n").replace(
    "BLOCK: tl.constexpr):", "BLOCK: tl.constexpr, DTYPE: tl.constexpr = None):")


def test_a_launch_in_a_branch_the_port_never_takes_is_left_out_of_the_launch_comparison(tmp_path):
    after = WITH_DTYPE.replace("_tma_kernel[(2,)](x, out, BLOCK=128)", "_tma_kernel[(2,)](x, out, BLOCK=128, DTYPE=dtype)")
    entry = classify_commit(tmp_path, {SOURCE: AFTER}, {SOURCE: after}, PORT, MATRIX)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "launch-arguments" not in entry.rules and "lacked-branch-launch" in entry.rules, entry.rules


def test_the_same_argument_on_the_launch_the_port_runs_is_still_a_launch_gap(tmp_path):
    after = WITH_DTYPE.replace("        _scale_kernel[(1,)](x, out, BLOCK=128)",
                               "        _scale_kernel[(1,)](x, out, BLOCK=128, DTYPE=dtype)")
    entry = classify_commit(tmp_path, {SOURCE: AFTER}, {SOURCE: after}, PORT, MATRIX)
    assert entry.verdict in FLAGGED and entry.verdict != NEEDS_REVIEW, entry.reason
    assert "launch-arguments" in entry.rules, entry.rules


# ``new-option``: the commit itself adds the defaulted parameter that selects the new path. Callers upstream can
# now pass it and the port cannot accept it: an interface change, not a branch the port lacks.
NO_TMA = KERNELS + '''
def scale(x, out, exact=False):
    if exact:
        _exact_kernel[(1,)](x, out, BLOCK=128)
    else:
        _scale_kernel[(1,)](x, out, BLOCK=128)
    return out
'''


def test_a_parameter_the_commit_adds_to_select_a_new_path_is_an_interface_change(tmp_path):
    entry = classify_commit(tmp_path, {SOURCE: NO_TMA}, {SOURCE: BEFORE}, PORT, MATRIX)
    assert entry.verdict in FLAGGED, entry.reason
    assert "lacked-branch" not in entry.rules and {"parameter-change", "new-option"} <= set(entry.rules), entry.rules


def test_a_later_change_in_the_path_an_existing_parameter_selects_is_still_not_carried(tmp_path):
    """The parameter existed before this commit (upstream added it earlier, the port did not follow)."""
    after = BEFORE.replace("_tma_kernel[(1,)](x, out, BLOCK=64)", "_tma_kernel[(2,)](x, out, BLOCK=64)")
    entry = classify_commit(tmp_path, {SOURCE: BEFORE}, {SOURCE: after}, PORT, MATRIX)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-carried"), entry.reason


def test_a_new_parameter_the_tree_declares_not_carried_stays_off(tmp_path):
    port = {"kernels/scale.py": PORT["kernels/scale.py"].replace(
        f"# portq: ports vllm:{SOURCE}::scale\n",
        f"# portq: ports vllm:{SOURCE}::scale\n# portq: not-carried vllm:{SOURCE}::scale[use_tma] -- no TMA\n")}
    entry = classify_commit(tmp_path, {SOURCE: NO_TMA}, {SOURCE: BEFORE}, port, MATRIX)
    assert entry.verdict not in FLAGGED or "parameter-change" not in entry.rules, (entry.verdict, entry.reason)
