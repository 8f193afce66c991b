"""A launch constant the wrapper chooses by a platform probe (``platform-chosen-launch``): the tile size
is picked from a module-level flag read from the device (its name, compute capability, architecture) at
import, and on the other platforms it is what it was. No caller supplies it and no caller can select
it: a launch heuristic of the wrapper for a reader (DESIGN §5: body-level, NEEDS_REVIEW), not an
interface gap. A tile changed on every platform is the launch rules' to decide (``tile-choice``); a flag a
caller passes, one read from the environment or rebound by a setter, stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "aiter/ops/triton/rows_sum.py"
BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _rows_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def rows_sum(x, out):
    n = x.numel()
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    _rows_sum_kernel[grid](x, out, n, BLOCK=BLOCK)
'''

PROBED_AFTER = BEFORE.replace(
    "import triton.language as tl\n",
    "import triton.language as tl\n\nOLDER_PART = 'Tesla' in torch.cuda.get_device_name(0)\n").replace(
    "    BLOCK = 128\n", "    BLOCK = 128 if not OLDER_PART else 64\n")
"""On one GPU family, named by the device at import, the tile is halved; elsewhere it is 128."""

CAPABILITY_AFTER = BEFORE.replace(
    "import triton.language as tl\n",
    "import triton.language as tl\n\nCAPABILITY = torch.cuda.get_device_capability()\n"
    "PRE_AMPERE = CAPABILITY[0] < 8\n").replace(
    "    BLOCK = 128\n", "    BLOCK = 64 if PRE_AMPERE else 128\n")
"""The same through a capability read once and a flag computed from it."""

# Unsound neighbours.
EVERYWHERE_AFTER = BEFORE.replace("    BLOCK = 128\n", "    BLOCK = 64\n")
BOTH_BRANCHES_AFTER = PROBED_AFTER.replace("BLOCK = 128 if not OLDER_PART else 64", "BLOCK = 256 if not OLDER_PART else 64")
SUPPLIED_AFTER = BEFORE.replace("    BLOCK = 128\n", "    BLOCK = 128 if x.dtype != torch.float32 else 64\n")
ENVIRONMENT_AFTER = BEFORE.replace(
    "import triton.language as tl\n",
    "import triton.language as tl\nimport os\n\nOLDER_PART = os.environ.get('SMALL_TILES') == '1'\n").replace(
    "    BLOCK = 128\n", "    BLOCK = 128 if not OLDER_PART else 64\n")
REBOUND_AFTER = PROBED_AFTER + "\n\ndef use_small_tiles(value):\n    global OLDER_PART\n    OLDER_PART = value\n"
MIXED_AFTER = PROBED_AFTER.replace(
    "BLOCK = 128 if not OLDER_PART else 64", "BLOCK = 128 if not (OLDER_PART or x.dtype == torch.float32) else 64")


def _tree() -> dict[str, str]:
    port = (
        "import triton\nimport triton.language as tl\n\n\n"
        f"# portq: ports vllm:{HOST}::_rows_sum_kernel\n"
        "@triton.jit\n"
        "def _double_kernel(src, dst, count, TILE: tl.constexpr):\n"
        "    i = tl.program_id(0) * TILE + tl.arange(0, TILE)\n"
        "    tl.store(dst + i, tl.load(src + i, mask=i < count) * 2, mask=i < count)\n\n\n"
        f"# portq: ports vllm:{HOST}::rows_sum\n"
        "def double_all(x, out):\n"
        "    count = x.numel()\n"
        "    TILE = 128\n"
        "    _double_kernel[(triton.cdiv(count, TILE),)](x, out, count, TILE=TILE)\n"
    )
    caller = ("from portq_kernels.mla_prefix.rows import double_all\n\n\n"
              "def prepare(x, out):\n    double_all(x, out)\n")
    return {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller}


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, _tree(), message="tiles")


def _host(verdict):
    return next(s for s in verdict.symbols if s.symbol == "rows_sum")


def test_a_tile_halved_on_a_device_named_at_import_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, PROBED_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    host = _host(verdict)
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "platform-chosen-launch" in host.rules, host.rules
    assert "OLDER_PART" in host.reason and "get_device_name" in host.reason, host.reason


def test_a_flag_computed_from_the_capability_is_a_probe_too(tmp_path):
    verdict = _one_commit(tmp_path, CAPABILITY_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "platform-chosen-launch" in _host(verdict).rules


def test_a_tile_changed_on_every_platform_is_no_platform_choice(tmp_path):
    # Not a probe: the launch rules decide it. The grid divides the same input by a tile the kernel is
    # passed, so it is a tile choice (test_tile_choice), not this rule's platform-chosen constant.
    verdict = _one_commit(tmp_path, EVERYWHERE_AFTER)
    assert "platform-chosen-launch" not in verdict.rules
    assert verdict.verdict == NEEDS_REVIEW and "tile-choice" in verdict.rules, (verdict.verdict, verdict.rules)


def test_a_probe_whose_both_branches_change_the_tile_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, BOTH_BRANCHES_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason


def test_a_tile_a_caller_selects_is_still_a_gap(tmp_path):
    assert _one_commit(tmp_path / "supplied", SUPPLIED_AFTER).verdict == REAL_GAP
    assert _one_commit(tmp_path / "mixed", MIXED_AFTER).verdict == REAL_GAP


def test_a_flag_from_the_environment_or_a_setter_is_still_a_gap(tmp_path):
    assert _one_commit(tmp_path / "environment", ENVIRONMENT_AFTER).verdict == REAL_GAP
    assert _one_commit(tmp_path / "rebound", REBOUND_AFTER).verdict == REAL_GAP


# A second launch the wrapper takes only on one device family, probed through a helper of another upstream
# module: the old launch is kept after it for every other platform.
DEVICE_MODULE = "aiter/utils/device.py"
DEVICE = '''\
import functools

import torch

_FAMILY_BY_MAJOR = {8: "ampere", 9: "hopper", 10: "blackwell"}


def device_kind():
    """Which kind of device this process runs on."""
    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


def _nvidia_family(index: int) -> str:
    major, minor = torch.cuda.get_device_capability(index)
    return _FAMILY_BY_MAJOR.get(major, f"sm_{major}{minor}")


@functools.lru_cache(maxsize=None)
def device_family(index: int = 0) -> str:
    kind = device_kind()
    try:
        if kind == "cuda":
            return _nvidia_family(index)
    except Exception:
        return kind
    return kind
'''
ENVIRONMENT_DEVICE = DEVICE.replace("    kind = device_kind()\n", "    kind = os.environ.get('DEVICE_KIND', 'cuda')\n") \
    .replace("import torch\n", "import os\n\nimport torch\n")

TILED = '''

@triton.jit
def _rows_sum_tiled_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def _should_tile(n):
    return {test}
'''


def _tiled(test: str, imports: str, call: str = "_should_tile(n)") -> str:
    after = BEFORE.replace("import triton.language as tl\n", "import triton.language as tl\n" + imports)
    after = after.replace("\n\ndef rows_sum(", TILED.format(test=test) + "\n\ndef rows_sum(")
    return after.replace("    BLOCK = 128\n", f"    if {call}:\n        grid = (1, triton.cdiv(n, 1024))\n"
                         "        _rows_sum_tiled_kernel[grid](x, out, n, BLOCK=1024)\n        return\n"
                         "    BLOCK = 128\n")


BLACKWELL = 'device_family().startswith("blackwell") and triton.next_power_of_2(n) >= 16384'


def _tiled_commit(tmp_path, after, device=DEVICE):
    return classify_commit(tmp_path, {HOST: BEFORE, DEVICE_MODULE: device}, {HOST: after, DEVICE_MODULE: device},
                           _tree(), message="tiles")


def test_a_second_launch_taken_on_a_device_family_probed_in_another_module_is_for_a_reader(tmp_path):
    for name, imports, test in (
            ("absolute", "from aiter.utils.device import device_family\n", BLACKWELL),
            ("relative", "from ...utils.device import device_family as family\n",
             BLACKWELL.replace("device_family()", "family()")),
            ("module", "from aiter.utils import device as dev\n", BLACKWELL.replace("device_family()",
                                                                                    "dev.device_family()"))):
        verdict = _tiled_commit(tmp_path / name, _tiled(test, imports))
        host = _host(verdict)
        assert verdict.verdict == NEEDS_REVIEW, (name, verdict.reason)
        assert "platform-chosen-launch" in host.rules, (name, host.rules, host.reason)


def test_a_second_launch_a_caller_can_select_is_still_a_gap(tmp_path):
    imports = "from aiter.utils.device import device_family\n"
    # Either operand may take the branch: the row width alone selects it on every platform.
    either = _tiled(BLACKWELL.replace(" and ", " or "), imports)
    assert _tiled_commit(tmp_path / "either", either).verdict == REAL_GAP
    # The width alone, no probe.
    width = _tiled("triton.next_power_of_2(n) >= 16384", imports)
    assert _tiled_commit(tmp_path / "width", width).verdict == REAL_GAP
    # The helper reads the environment, which a caller sets.
    assert _tiled_commit(tmp_path / "environment", _tiled(BLACKWELL, imports), ENVIRONMENT_DEVICE).verdict == REAL_GAP
    # A value the caller passes selects it.
    passed = _tiled(BLACKWELL, imports, call="x.dtype == torch.float32")
    assert _tiled_commit(tmp_path / "passed", passed).verdict == REAL_GAP
