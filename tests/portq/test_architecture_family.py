"""A test for a GPU architecture family (AMD's CDNA, RDNA or a ``gfx`` target,
Intel's PVC or Xe) is a test for its vendor's platform: for a port whose tree
never names that platform nor the family it is false, so a change confined to
the branch it selects is not the port's (``absent-platform``). A tree that
names the family, or a change on the port's own side of the test, stays
flagged. Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.test_absent_platform import BASE, ENGINE, _edit, _not_carried, _tree

_CDNA = BASE.replace("\n\n@triton.jit", "\n\ndef is_cdna() -> bool:\n"
                                        "    return torch.cuda.get_device_properties(0).gcnArchName.startswith('gfx94')\n"
                                        "\n\n@triton.jit") \
    .replace("    warps = 32\n", "    warps = 32\n    if is_cdna(): warps = warps // 2\n")


def test_a_branch_for_an_architecture_family_the_tree_never_names_is_not_the_ports(tmp_path):
    _not_carried(_edit(tmp_path, _CDNA))


def test_a_gfx_target_helper_is_a_test_for_its_vendors_platform(tmp_path):
    after = _CDNA.replace("is_cdna", "is_gfx942")
    _not_carried(_edit(tmp_path, after))


def test_an_intel_family_helper_is_a_test_for_intels_platform(tmp_path):
    after = _CDNA.replace("is_cdna", "is_pvc")
    _not_carried(_edit(tmp_path, after))


def test_a_tree_that_names_the_family_may_run_on_it(tmp_path):
    engine = "import torch\n" + ENGINE + "\n\nON_CDNA = torch.cuda.get_device_properties(0).gcnArchName == 'cdna3'\n"
    verdict = _edit(tmp_path, _CDNA, tree=_tree(engine))
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules


def test_a_change_on_the_ports_side_of_a_family_test_is_still_flagged(tmp_path):
    after = _CDNA.replace("    if is_cdna(): warps = warps // 2\n",
                          "    if not is_cdna(): warps = warps // 2\n")
    verdict = _edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "absent-platform" not in verdict.rules
