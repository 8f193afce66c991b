"""A ported function (a tuning-list generator, say) that a commit removes while the same file now binds its old
name at module level to definitions the commit adds (``make_configs = make_wide_configs`` under a setting) keeps
its identity in the bound definition that carries most of its old lines (rule ``rebound-name``): every caller
that named the old function now runs that one, so a later change to it is the port's, never a silent
not-ported. A binding to a definition sharing no line of the old body, or a removal with no binding of the old
name, is not followed."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "SCAN"
title    = "Tiled scan"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

HEADER = "import torch\nimport triton\nimport triton.language as tl\n\nSETTING = 'wide'\n\n\n"

GENERATOR = '''\
def {name}():
    configs = []
    for block in [64, 128]:
        for warps in [2, 4]:
            for stages in [1, 2]:
                configs.append(triton.Config({{'BLOCK': block}}, num_warps=warps, num_stages=stages))
    return configs
'''

REWRITTEN = '''\
def make_wide_configs():
    configs = []
    for stages in [1, 2]:
        for warps in [1, 2, 4]:
            for block in [32, 64, 128, 256]:
                configs.append(triton.Config({'BLOCK': block}, num_warps=warps, num_stages=stages))
    return configs


def make_quick_configs():
    return [triton.Config({'BLOCK': 64}, num_warps=1, num_stages=1)]


if SETTING == 'wide':
    {name} = make_wide_configs
else:
    {name} = make_quick_configs
'''

KERNEL = '''\
@triton.autotune(configs={name}(), key=['n'])
@triton.jit
def scan_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs, mask=mask, other=0.0), axis=0), mask=mask)


def scan(x):
    y = torch.empty_like(x)
    n = x.numel()
    scan_kernel[lambda meta: (triton.cdiv(n, meta['BLOCK']),)](x, y, n)
    return y
'''


def module(name="make_configs", rebound=False):
    generator = REWRITTEN.replace("{name}", name) if rebound else GENERATOR.format(name=name)
    return HEADER + generator + "\n\n" + KERNEL.format(name=name)


TREE = {
    "kernels/scan.py": '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/scan.py::make_configs
def scan_configs():
    configs = []
    for block in [64, 128]:
        for warps in [2, 4]:
            for stages in [1, 2]:
                configs.append(triton.Config({'BLOCK': block}, num_warps=warps, num_stages=stages))
    return configs


# portq: ports vllm:ops/scan.py::scan_kernel
@triton.autotune(configs=scan_configs(), key=['n'])
@triton.jit
def scan_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs, mask=mask, other=0.0), axis=0), mask=mask)


# portq: ports vllm:ops/scan.py::scan
def scan(x):
    y = torch.empty_like(x)
    n = x.numel()
    scan_kernel[lambda meta: (triton.cdiv(n, meta['BLOCK']),)](x, y, n)
    return y
''',
    "engine/run.py": "from kernels.scan import scan\n\n\ndef run(x):\n    return scan(x)\n",
}


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol.split("::")[-1] == name)


def _retuned(source: str) -> str:
    return source.replace("for block in [32, 64, 128, 256]:", "for block in [16, 32, 64, 128, 256]:")


def test_a_change_to_the_definition_a_renamed_generators_name_is_rebound_to_is_the_ports(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scan.py": module()}),
        CommitSpec("rename", files={"ops/scan.py": module("make_tuned_configs")}),
        CommitSpec("settings", files={"ops/scan.py": module("make_tuned_configs", rebound=True)}),
        CommitSpec("retune", files={"ops/scan.py": _retuned(module("make_tuned_configs", rebound=True))}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "make_wide_configs")
    assert later.verdict in FLAGGED, later.reason
    assert "rebound-name" in later.rules, later.rules
    assert later.ports


def test_the_bound_definition_sharing_no_line_of_the_old_body_is_not_followed(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scan.py": module()}),
        CommitSpec("settings", files={"ops/scan.py": module(rebound=True)}),
        CommitSpec("quicker", files={"ops/scan.py": module(rebound=True).replace("num_warps=1, num_stages=1)]",
                                                                              "num_warps=2, num_stages=1)]")}),
    ], TREE, matrix=MATRIX)
    other = _symbol(verdicts[2], "make_quick_configs")
    assert other.verdict == NOT_APPLICABLE and other.justification == "not-ported", other.reason
    assert "rebound-name" not in other.rules


def test_a_removal_without_a_binding_of_the_old_name_is_not_followed(tmp_path):
    unbound = module(rebound=True).replace("if SETTING == 'wide':\n    make_configs = make_wide_configs\n"
                                           "else:\n    make_configs = make_quick_configs\n", "") \
        .replace("configs=make_configs()", "configs=make_wide_configs()")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/scan.py": module()}),
        CommitSpec("replace", files={"ops/scan.py": unbound}),
        CommitSpec("retune", files={"ops/scan.py": _retuned(unbound)}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "make_wide_configs")
    assert "rebound-name" not in later.rules, later.rules
