"""Module-level definitions a ported definition uses — aliases, flags,
constants — are part of its surface wherever they live: in its own file or
in a module it imports them from (absolute, relative or aliased imports).
Import-time code of a copied module runs with the copy (rule
``module-level-use``)."""
from __future__ import annotations

import pytest

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "ATTN"
title    = "Attention kernels"
upstream = "vllm"
paths    = ["src/pkg/ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

UTILS = '''\
import triton.language as tl

CC = 9
exp = tl.exp
IS_HOPPER = CC >= 9
UNUSED_LIMIT = 4
'''

UTILS_EXP_JIT = UTILS.replace("exp = tl.exp\n", "")  + '''

@triton.jit
def exp(x):
    return tl.exp(x.to(tl.float32))
'''

ATTN = '''\
import triton
import triton.language as tl

{imports}


@triton.jit
def _attn_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, {exp}(x))


def attn(x, y):
    block = 128 if {hopper} else 64
    _attn_kernel[(1,)](x, y, BLOCK=block)
'''

IMPORTS = {
    "relative": ("from .utils import exp, IS_HOPPER as hopper", "exp", "hopper"),
    "absolute": ("from pkg.ops.utils import exp, IS_HOPPER", "exp", "IS_HOPPER"),
    "module": ("from pkg.ops import utils as u", "u.exp", "u.IS_HOPPER"),
}


def tree(pin=""):
    return {
        "kernels/attn.py": f'''\
import triton
import triton.language as tl


# portq: ports vllm:src/pkg/ops/attn.py::_attn_kernel{pin}
@triton.jit
def attention_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.exp(x))


# portq: ports vllm:src/pkg/ops/attn.py::attn{pin}
def attention(x, y):
    attention_kernel[(1,)](x, y, BLOCK=128)
''',
        "engine/run.py": "from kernels.attn import attention\n\n\ndef run(x, y):\n    attention(x, y)\n",
    }


@pytest.mark.parametrize("form", sorted(IMPORTS))
def test_a_changed_alias_flag_or_constant_in_an_imported_module_reaches_the_ported_users(tmp_path, form):
    imports, exp, hopper = IMPORTS[form]
    attn = ATTN.format(imports=imports, exp=exp, hopper=hopper)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/pkg/ops/utils.py": UTILS, "src/pkg/ops/attn.py": attn}),
        CommitSpec("exp in fp32", files={"src/pkg/ops/utils.py": UTILS_EXP_JIT}),
        CommitSpec("hopper only", files={"src/pkg/ops/utils.py": UTILS_EXP_JIT.replace("CC >= 9", "CC == 9")}),
        CommitSpec("unused", files={"src/pkg/ops/utils.py": UTILS_EXP_JIT.replace("CC >= 9", "CC == 9")
                                    .replace("UNUSED_LIMIT = 4", "UNUSED_LIMIT = 8")}),
    ], tree(), matrix=MATRIX)
    for position, word, user in ((1, "exp", "_attn_kernel"), (2, "IS_HOPPER", "attn")):
        verdict = verdicts[position]
        assert verdict.verdict in FLAGGED, (position, verdict.reason)
        assert "module-level-use" in verdict.rules, (position, verdict.rules)
        assert word in verdict.reason and user in verdict.reason, verdict.reason
    assert verdicts[3].verdict == NOT_APPLICABLE, verdicts[3].reason


def test_import_time_code_of_a_copied_module_runs_with_the_copy(tmp_path):
    attn = ATTN.format(imports="from .utils import exp, IS_HOPPER as hopper", exp="exp", hopper="hopper")
    flipped = attn.replace("import triton.language as tl\n", "import triton.language as tl\n\n"
                           "triton.knobs.autotuning.cache = False\n", 1)
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"src/pkg/ops/utils.py": UTILS, "src/pkg/ops/attn.py": attn}),
        CommitSpec("no autotune cache", files={"src/pkg/ops/attn.py": flipped}),
    ], tree(pin=" @" + "0" * 40), matrix=MATRIX)
    verdict = verdicts[1]
    assert verdict.verdict in FLAGGED and "module-level-use" in verdict.rules, verdict.reason
    assert "import" in verdict.reason
