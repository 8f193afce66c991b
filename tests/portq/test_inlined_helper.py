"""An expression replaced by a call of a definition whose body returns exactly that expression, reading
every free name as the old place read it, is the same program (rule ``inlined-helper``); a helper that
returns something else, takes parameters, or reads a name bound otherwise stays flagged."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row normalisation"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

KERNEL = '''\
@triton.autotune(
    configs={configs},
    key=['n'],
)
@triton.jit
def normalise(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * n + cols, x / tl.sum(x, axis=0), mask=cols < n)
'''

INLINE = "[triton.Config({}, num_warps=2**i) for i in range(6)]"

BASE = {
    "lib/__init__.py": "",
    "lib/utils.py": "import triton\n\n\ndef block_configs():\n    return [triton.Config({'B': 64})]\n",
    "lib/norm.py": "import triton\nimport triton.language as tl\n\n\n" + KERNEL.format(configs=INLINE),
}

TREE = {
    "kernels/norm.py": '''\
import triton
import triton.language as tl


# portq: ports vllm:lib/norm.py::normalise
@triton.autotune(
    configs=[triton.Config({}, num_warps=2**i) for i in range(6)],
    key=['n'],
)
@triton.jit
def normalise_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * n + cols, x / tl.sum(x, axis=0), mask=cols < n)


def run_normalise(x):
    y = x.new_empty(x.shape)
    normalise_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    return y
''',
    "engine/model.py": "from kernels.norm import run_normalise\n\n\ndef run(x):\n    return run_normalise(x)\n",
}


def _helper(body: str, header: str = "import triton\n", signature: str = "()") -> str:
    return (header + "\n\ndef block_configs():\n    return [triton.Config({'B': 64})]\n\n\n"
            f"def warp_configs{signature}:\n    \"\"\"Every number of warps.\"\"\"\n    return {body}\n")


def _kernel(tmp_path, files: dict[str, str]):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=BASE),
                                              CommitSpec("move the configs into a helper", files=files)],
                                   TREE, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "normalise")


IMPORTED = ("import triton\nimport triton.language as tl\n\nfrom .utils import warp_configs\n\n\n"
            + KERNEL.format(configs="warp_configs()"))


def test_an_expression_moved_verbatim_into_an_imported_helper_is_cosmetic(tmp_path):
    kernel = _kernel(tmp_path, {"lib/utils.py": _helper(INLINE), "lib/norm.py": IMPORTED})
    assert kernel.verdict == NOT_APPLICABLE and kernel.justification == "cosmetic", kernel.reason
    assert kernel.rules == ["inlined-helper"]
    assert "warp_configs" in kernel.reason


def test_a_helper_in_the_same_module_is_cosmetic(tmp_path):
    same = ("import triton\nimport triton.language as tl\n\n\ndef warp_configs():\n    return " + INLINE
            + "\n\n\n" + KERNEL.format(configs="warp_configs()"))
    kernel = _kernel(tmp_path, {"lib/norm.py": same})
    assert kernel.verdict == NOT_APPLICABLE and kernel.rules == ["inlined-helper"], kernel.reason


def test_a_helper_returning_another_literal_stays_flagged(tmp_path):
    kernel = _kernel(tmp_path, {"lib/utils.py": _helper(INLINE.replace("range(6)", "range(5)")),
                                "lib/norm.py": IMPORTED})
    assert kernel.verdict in FLAGGED and "inlined-helper" not in kernel.rules, kernel.reason


def test_a_helper_reading_its_own_modules_global_stays_flagged(tmp_path):
    # the old expression read the kernel module's WARPS; the helper reads its own module's, another binding
    header = "import triton\n\nWARPS = 6\n"
    old = dict(BASE, **{"lib/norm.py": "import triton\nimport triton.language as tl\n\nWARPS = 6\n\n\n"
                        + KERNEL.format(configs=INLINE.replace("range(6)", "range(WARPS)"))})
    new_kernel = ("import triton\nimport triton.language as tl\n\nfrom .utils import warp_configs\n\nWARPS = 6\n\n\n"
                  + KERNEL.format(configs="warp_configs()"))
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files=old),
        CommitSpec("move", files={"lib/utils.py": _helper(INLINE.replace("range(6)", "range(WARPS)"), header),
                                  "lib/norm.py": new_kernel})], TREE, matrix=MATRIX)
    kernel = next(s for s in verdicts[1].symbols if s.symbol == "normalise")
    assert kernel.verdict in FLAGGED and "inlined-helper" not in kernel.rules, kernel.reason


def test_a_helper_whose_module_binds_a_name_to_something_else_stays_flagged(tmp_path):
    kernel = _kernel(tmp_path, {"lib/utils.py": _helper(INLINE, "import triton.language as triton\n"),
                                "lib/norm.py": IMPORTED})
    assert kernel.verdict in FLAGGED and "inlined-helper" not in kernel.rules, kernel.reason


def test_a_helper_with_parameters_stays_flagged(tmp_path):
    kernel = _kernel(tmp_path, {"lib/utils.py": _helper(INLINE.replace("range(6)", "range(k)"), signature="(k=6)"),
                                "lib/norm.py": IMPORTED})
    assert kernel.verdict in FLAGGED and "inlined-helper" not in kernel.rules, kernel.reason


def test_a_decorated_helper_stays_flagged(tmp_path):
    helper = _helper(INLINE, "import functools\nimport triton\n").replace(
        "def warp_configs", "@functools.lru_cache\ndef warp_configs")
    kernel = _kernel(tmp_path, {"lib/utils.py": helper, "lib/norm.py": IMPORTED})
    assert kernel.verdict in FLAGGED and "inlined-helper" not in kernel.rules, kernel.reason
