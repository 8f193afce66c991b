"""Branches for a platform the port never runs (docs/tricky-cases.md, "branches
the port does not have"): a platform predicate (``torch.version.hip``, a helper
named for the platform such as ``is_hip()``, ``torch.xpu.is_available()``) is
false for a port whose tree never names that platform, so an edit confined to
the branch it selects changes nothing the port runs (``absent-platform``). The
import that brings such a helper into the file binds a name the old module never
named, so it reaches only the definitions that now call it, each decided on its
own (``new-import-use``).

Each runs the real ``portq scan`` over a small synthetic history: base, then
the edit (entry 1)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "ROWS"
title    = "Row sums"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

UTILS = '''\
import torch


def cdiv(a, b):
    return (a + b - 1) // b
'''


BASE = '''\
import torch
import triton
import triton.language as tl

from ops.utils import cdiv


@triton.jit
def _row_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(x))


def row_sum(x):
    out = torch.empty(x.shape[0], device=x.device)
    warps = 32
    _row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=cdiv(x.shape[1], 1), num_warps=warps)
    return out
'''

PORT = '''\
import torch

from kernels.rows import sum_rows_kernel


# portq: ports vllm:ops/rows.py::row_sum
def sum_rows(x):
    out = torch.empty(x.shape[0], device=x.device)
    sum_rows_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=x.shape[1], num_warps=32)
    return out
'''

ROWS = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/rows.py::_row_sum_kernel
@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(x))
'''

ENGINE = "from kernels.sums import sum_rows\n\n\ndef step(x):\n    return sum_rows(x)\n"


def _tree(engine=ENGINE):
    return {"kernels/rows.py": ROWS, "kernels/sums.py": PORT, "engine/step.py": engine}


def _edit(tmp_path, after, utils=UTILS, tree=None):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": BASE, "ops/utils.py": UTILS}),
        CommitSpec("edit", files={"ops/rows.py": after, "ops/utils.py": utils}),
    ], tree or _tree(), matrix=MATRIX)
    return verdicts[1]


_HELPER = BASE.replace("\n\n@triton.jit", "\n\ndef is_hip() -> bool:\n    return torch.version.hip is not None\n"
                                         "\n\n@triton.jit") \
    .replace("    warps = 32\n", "    warps = 32 if not is_hip() else 16\n")
_VERSION = BASE.replace("    warps = 32\n", "    warps = 32\n    if torch.version.hip is not None:\n"
                                             "        warps = 16\n")


def _not_carried(verdict):
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    wrapper = next(s for s in verdict.symbols if s.symbol == "row_sum")
    assert (wrapper.justification, wrapper.rules) == ("not-carried", ["absent-platform"]), wrapper.reason


def test_a_setting_chosen_by_a_platform_helper_the_tree_never_names_is_not_the_ports(tmp_path):
    _not_carried(_edit(tmp_path, _HELPER))


def test_a_branch_on_the_platform_version_attribute_is_not_the_ports(tmp_path):
    _not_carried(_edit(tmp_path, _VERSION))


def test_a_tree_that_names_the_platform_may_run_on_it(tmp_path):
    engine = ENGINE + "\n\nON_ROCM = torch.version.hip is not None\n"
    verdict = _edit(tmp_path, _HELPER, tree=_tree("import torch\n" + engine))
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_a_change_on_the_ports_own_platform_is_still_flagged(tmp_path):
    after = _HELPER.replace("32 if not is_hip() else 16", "16 if not is_hip() else 32")
    verdict = _edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_a_call_that_only_shares_a_word_with_a_platform_decides_nothing(tmp_path):
    after = _HELPER.replace("def is_hip() -> bool:\n    return torch.version.hip is not None",
                            "def is_hip_sized(x):\n    return x.shape[1] > 4096").replace("is_hip()", "is_hip_sized(x)")
    verdict = _edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_prose_about_the_platform_is_not_code_that_names_it(tmp_path):
    engine = '"""Runs on CUDA only; ROCm (hip) is not a platform this engine supports."""\n' + ENGINE \
        + "# no HIP build\n"
    _not_carried(_edit(tmp_path, _HELPER, tree=_tree(engine)))


def test_a_pinned_copy_runs_where_upstream_runs(tmp_path):
    commits = [CommitSpec("base", files={"ops/rows.py": BASE, "ops/utils.py": UTILS}),
               CommitSpec("edit", files={"ops/rows.py": _HELPER, "ops/utils.py": UTILS})]
    _, shas = classify_history(tmp_path / "first", commits, _tree(), matrix=MATRIX)
    tree = {**_tree(), "kernels/sums.py": PORT.replace("::row_sum\n", f"::row_sum @{shas[0][:10]}\n")}
    verdicts, _ = classify_history(tmp_path / "pinned", commits, tree, matrix=MATRIX)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert "absent-platform" not in verdicts[1].rules


def test_a_helper_of_the_file_that_only_returns_the_platform_test_is_that_test(tmp_path):
    after = _HELPER.replace("def is_hip() -> bool:", "def _amd_gpu() -> bool:").replace("is_hip()", "_amd_gpu()")
    assert "_amd_gpu()" in after
    _not_carried(_edit(tmp_path, after))


def test_a_helper_of_the_file_that_computes_something_else_decides_nothing(tmp_path):
    after = _HELPER.replace("def is_hip() -> bool:\n    return torch.version.hip is not None",
                            "def _amd_gpu() -> bool:\n    return torch.cuda.device_count() > 4") \
        .replace("is_hip()", "_amd_gpu()")
    verdict = _edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


# --- a name a new import binds is the change of the ported definitions that use it --------------------

_IMPORTED = BASE.replace("from ops.utils import cdiv", "from ops.utils import cdiv, is_hip") \
    .replace("    warps = 32\n", "    warps = 32 if not is_hip() else 16\n")
_HIP_UTILS = UTILS + "\n\ndef is_hip() -> bool:\n    return torch.version.hip is not None\n"


def test_a_new_import_of_the_platform_helper_is_decided_with_its_users(tmp_path):
    verdict = _edit(tmp_path, _IMPORTED, utils=_HIP_UTILS)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    imports = next(s for s in verdict.symbols if s.symbol == "<toplevel>")
    assert imports.rules == ["new-import-use"], imports.reason


def test_a_new_import_that_shadows_a_builtin_still_needs_a_reader(tmp_path):
    before = BASE.replace("    warps = 32\n", "    warps = max(32, 16)\n")
    after = before.replace("from ops.utils import cdiv", "from ops.utils import cdiv, max")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": before, "ops/utils.py": UTILS}),
        CommitSpec("edit", files={"ops/rows.py": after, "ops/utils.py": UTILS + "\n\ndef max(a, b):\n    return a\n"}),
    ], _tree(), matrix=MATRIX)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    imports = next(s for s in verdicts[1].symbols if s.symbol == "<toplevel>")
    assert imports.verdict in FLAGGED and "new-import-use" not in imports.rules, imports.reason


# --- device names compared with a platform's name, helpers reached through a module ------------------

_DEVICE_UTILS = UTILS + '''

def infer_device():
    return "cuda" if torch.cuda.is_available() else "cpu"
'''
_DEVICE_BASE = BASE.replace("from ops.utils import cdiv", "import ops.utils\nfrom ops.utils import cdiv, infer_device")


def _device_edit(tmp_path, after, before=_DEVICE_BASE):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": before, "ops/utils.py": _DEVICE_UTILS}),
        CommitSpec("edit", files={"ops/rows.py": after, "ops/utils.py": _DEVICE_UTILS}),
    ], _tree(), matrix=MATRIX)
    return verdicts[1]


def _warps(expression):
    return _DEVICE_BASE.replace("    warps = 32\n", f"    warps = {expression}\n")


def test_a_device_name_compared_with_an_absent_platform_is_not_the_ports(tmp_path):
    _not_carried(_device_edit(tmp_path, _warps('32 if infer_device() != "npu" else 16')))


def test_a_device_name_tested_against_a_tuple_of_absent_platforms_is_not_the_ports(tmp_path):
    after = _DEVICE_BASE.replace("    warps = 32\n", '    warps = 32\n    if infer_device() in ("xpu", "npu"):\n'
                                                   '        warps = 16\n')
    _not_carried(_device_edit(tmp_path, after))


def test_a_device_other_than_cuda_is_one_the_port_does_not_run_on(tmp_path):
    _not_carried(_device_edit(tmp_path, _warps('32 if x.device.type == "cuda" else 16')))


def test_a_change_to_what_cuda_takes_through_a_device_name_is_still_flagged(tmp_path):
    verdict = _device_edit(tmp_path, _warps('16 if x.device.type == "cuda" else 32'))
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_a_device_name_compared_with_something_that_is_no_platform_decides_nothing(tmp_path):
    verdict = _device_edit(tmp_path, _warps('32 if infer_device() != "cpu" else 16'))
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_an_availability_helper_reached_through_its_module_is_a_platform_test(tmp_path):
    _not_carried(_device_edit(tmp_path, _warps("16 if ops.utils.is_torch_npu_available() else 32")))


# --- module-level bindings and imports chosen by a platform test ---------------------------------------

_LIMITED = _DEVICE_BASE.replace("\n\n@triton.jit", "\nMAX_BLOCK = 65536\n\n\n@triton.jit") \
    .replace("BLOCK=cdiv(x.shape[1], 1)", "BLOCK=min(MAX_BLOCK, x.shape[1])")


def _module_level(verdict):
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    module = next(s for s in verdict.symbols if s.symbol == "<toplevel>")
    assert (module.justification, module.rules) == ("not-carried", ["absent-platform"]), module.reason


def test_a_module_level_constant_chosen_by_an_absent_platform_keeps_the_ports_value(tmp_path):
    after = _LIMITED.replace("MAX_BLOCK = 65536", 'MAX_BLOCK = 16384 if infer_device() == "npu" else 65536')
    _module_level(_device_edit(tmp_path, after, before=_LIMITED))


def test_a_module_level_constant_changed_for_the_ports_platform_is_still_flagged(tmp_path):
    after = _LIMITED.replace("MAX_BLOCK = 65536", 'MAX_BLOCK = 65536 if infer_device() == "npu" else 16384')
    verdict = _device_edit(tmp_path, after, before=_LIMITED)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_an_import_chosen_by_an_absent_platform_helper_binds_what_the_port_had(tmp_path):
    after = _DEVICE_BASE.replace("from ops.utils import cdiv, infer_device",
                                 "from ops.utils import infer_device, is_npu_available\n\n"
                                 "if not is_npu_available():\n    from ops.utils import cdiv\n"
                                 "else:\n    from ops.npu_utils import cdiv")
    _module_level(_device_edit(tmp_path, after))


def test_an_absent_platform_added_to_an_import_condition_leaves_the_rest_of_it(tmp_path):
    before = _DEVICE_BASE.replace("from ops.utils import cdiv, infer_device",
                                  "from ops.utils import infer_device\n\nHAS_FAST = True\n\nif HAS_FAST:\n"
                                  "    from ops.fast import cdiv\nelse:\n    from ops.utils import cdiv")
    after = before.replace("if HAS_FAST:", "if HAS_FAST and not is_npu_available():") \
        .replace("from ops.utils import infer_device", "from ops.utils import infer_device, is_npu_available")
    _module_level(_device_edit(tmp_path, after, before=before))


def test_an_import_chosen_for_the_ports_platform_is_still_flagged(tmp_path):
    after = _DEVICE_BASE.replace("from ops.utils import cdiv, infer_device",
                                 "from ops.utils import infer_device, is_npu_available\n\n"
                                 "if not is_npu_available():\n    from ops.fast import cdiv\n"
                                 "else:\n    from ops.utils import cdiv")
    verdict = _device_edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_a_pinned_copy_of_a_module_level_platform_choice_is_still_flagged(tmp_path):
    after = _LIMITED.replace("MAX_BLOCK = 65536", 'MAX_BLOCK = 16384 if infer_device() == "npu" else 65536')
    commits = [CommitSpec("base", files={"ops/rows.py": _LIMITED, "ops/utils.py": _DEVICE_UTILS}),
               CommitSpec("edit", files={"ops/rows.py": after, "ops/utils.py": _DEVICE_UTILS})]
    _, shas = classify_history(tmp_path / "first", commits, _tree(), matrix=MATRIX)
    tree = {**_tree(), "kernels/sums.py": PORT.replace("::row_sum\n", f"::row_sum @{shas[0][:10]}\n")}
    verdicts, _ = classify_history(tmp_path / "pinned", commits, tree, matrix=MATRIX)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert "absent-platform" not in verdicts[1].rules


def test_a_platform_only_helper_imported_for_the_absent_branch_is_not_the_ports(tmp_path):
    after = _DEVICE_BASE.replace("from ops.utils import cdiv, infer_device",
                                 "from ops.utils import cdiv, get_npu_core_count, infer_device") \
        .replace("    warps = 32\n", '    warps = 32\n    if infer_device() == "npu":\n'
                                     '        warps = get_npu_core_count() // 2\n')
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": _DEVICE_BASE, "ops/utils.py": _DEVICE_UTILS}),
        CommitSpec("edit", files={"ops/rows.py": after, "ops/utils.py": _DEVICE_UTILS
                                  + "\n\ndef get_npu_core_count():\n    return 20\n"}),
    ], _tree(), matrix=MATRIX)
    _not_carried(verdicts[1])


def test_a_constant_another_module_chooses_by_an_absent_platform_keeps_the_ports_value(tmp_path):
    utils = _DEVICE_UTILS + "\n\nMAX_BLOCK = 65536\n"
    rows = _DEVICE_BASE.replace("from ops.utils import cdiv, infer_device",
                                "from ops.utils import MAX_BLOCK, cdiv, infer_device") \
        .replace("BLOCK=cdiv(x.shape[1], 1)", "BLOCK=min(MAX_BLOCK, x.shape[1])")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": rows, "ops/utils.py": utils}),
        CommitSpec("edit", files={"ops/rows.py": rows, "ops/utils.py": utils.replace(
            "MAX_BLOCK = 65536", 'MAX_BLOCK = 16384 if infer_device() == "npu" else 65536')}),
    ], _tree(), matrix=MATRIX)
    assert verdicts[1].verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdicts[1].symbols]
    module = next(s for s in verdicts[1].symbols if s.symbol == "<toplevel>")
    assert module.rules == ["absent-platform"], module.reason


# --- platforms named by their vendor: AMD (HIP/ROCm), Intel (XPU), NVIDIA (the default device) ----------

def test_a_platform_named_by_its_vendor_is_that_platform(tmp_path):
    _not_carried(_device_edit(tmp_path, _warps('16 if device_platform() == "amd" else 32')))
    _not_carried(_device_edit(tmp_path / "intel", _warps('16 if device_platform() == "intel" else 32')))


def test_a_vendor_helper_is_a_platform_helper(tmp_path):
    _not_carried(_device_edit(tmp_path, _warps("16 if ops.utils.is_amd() else 32")))


def test_nvidia_is_the_ports_own_device_when_the_tree_names_no_other(tmp_path):
    _not_carried(_device_edit(tmp_path, _warps('32 if device_platform() == "nvidia" else 16')))


def test_a_change_to_what_nvidia_takes_is_still_flagged(tmp_path):
    verdict = _device_edit(tmp_path, _warps('16 if device_platform() == "nvidia" else 32'))
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_a_tree_that_names_the_vendor_may_run_on_its_platform(tmp_path):
    tree = _tree(ENGINE + '\nBACKENDS = ("amd", "cuda")\n')
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": _DEVICE_BASE, "ops/utils.py": _DEVICE_UTILS}),
        CommitSpec("edit", files={"ops/rows.py": _warps('16 if device_platform() == "amd" else 32'),
                                  "ops/utils.py": _DEVICE_UTILS}),
    ], tree, matrix=MATRIX)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason


def test_a_module_level_setting_for_the_default_vendor_keeps_the_ports_value(tmp_path):
    before = _DEVICE_BASE.replace("\n\n@triton.jit", "\nWARPS = 32\n\n\n@triton.jit", 1) \
        .replace("    warps = 32\n", "    warps = WARPS\n")
    after = before.replace("WARPS = 32\n", 'WARPS = 32 if device_platform() == "nvidia" else 16\n')
    verdict = _device_edit(tmp_path, after, before)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
