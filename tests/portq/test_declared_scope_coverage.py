"""What a `not-carried` declaration covers (issue 24, the third held-out split's justifications).

* A declaration of a class covers its methods (``declared-member``): a commit
  that changes only ``Fn.backward`` of a class the tree declares not-carried
  is NOT_APPLICABLE/not-carried, not a coverage hole (`not-ported`). A
  declaration narrowed to a parameter (``Fn[FLAG]``) covers no method, and a
  method the tree ports is still compared against its port."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from portq.tree.anchors import Anchor
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch


def norm_fwd(x):
    return x / x.norm()


class NormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return norm_fwd(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return dy / x.norm()
'''

AFTER = BEFORE.replace("return dy / x.norm()", "dy = dy.contiguous()\n        return dy / x.norm()")


def _tree(declaration: str, port_backward: bool = False) -> dict[str, str]:
    backward = ("\n\n# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::NormFn.backward\ndef norm_bwd(dy, x):\n"
                "    return dy / x.norm()\n") if port_backward else ""
    return {"kernels/mla_prefix/norm.py": f'''import torch

# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::{declaration} -- forward only


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::norm_fwd
def normalise(x):
    return x / x.norm()
{backward}''', "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.norm import normalise\n\n\n"
        "def apply(x):\n    return normalise(x)\n"}


def _backward(tmp_path, tree):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: BEFORE}),
                                              CommitSpec("change", files={OPS: AFTER})], tree)
    entry = verdicts[1]
    return entry, next(s for s in entry.symbols if s.symbol.endswith("backward"))


def test_a_method_of_a_class_declared_not_carried_is_not_carried(tmp_path):
    entry, backward = _backward(tmp_path, _tree("NormFn"))
    assert (backward.verdict, backward.justification) == (NOT_APPLICABLE, "not-carried"), backward.reason
    assert "declared-member" in backward.rules
    assert "NormFn" in backward.reason
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-carried"), entry.reason


def test_a_declaration_narrowed_to_a_parameter_covers_no_method(tmp_path):
    _, backward = _backward(tmp_path, _tree("NormFn[FLAG]"))
    assert backward.justification != "not-carried", backward.reason


def test_a_ported_method_of_a_declared_class_is_still_compared(tmp_path):
    _, backward = _backward(tmp_path, _tree("NormFn", port_backward=True))
    assert backward.verdict != NOT_APPLICABLE, backward.reason


def test_a_class_declaration_covers_members_but_not_a_same_named_prefix():
    anchor = Anchor(kind="not-carried", upstream="vllm", path="ops/norm.py", symbol="NormFn", file="k.py",
                    line=1, quote="")
    assert anchor.encloses("NormFn.backward")
    assert anchor.encloses("NormFn::backward")
    assert not anchor.encloses("NormFnV2.backward")
    assert not anchor.encloses("NormFn")


# --- imports whose every reader is out of scope, or that nothing reads -------------

DECORATED = BEFORE.replace("import torch\n", "import torch\nfrom torch.cuda.amp import custom_fwd\n", 1).replace(
    "    @staticmethod\n    def forward", "    @staticmethod\n    @custom_fwd\n    def forward")
REBOUND = DECORATED.replace("from torch.cuda.amp import custom_fwd", "from mypkg.amp import custom_fwd")


def _entry(tmp_path, before, after, tree):
    return classify_commit(tmp_path, {OPS: before}, {OPS: after}, tree, message="change")


def test_an_import_only_definitions_declared_not_carried_use_is_not_carried(tmp_path):
    entry = _entry(tmp_path, DECORATED, REBOUND, _tree("NormFn"))
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-carried"), entry.reason
    assert "not-carried-import" in entry.rules
    assert "NormFn" in entry.reason


def test_an_import_an_undeclared_definition_also_uses_is_not_not_carried(tmp_path):
    before = DECORATED + "\n\ndef helper(x):\n    return custom_fwd(x)\n"
    after = REBOUND + "\n\ndef helper(x):\n    return custom_fwd(x)\n"
    entry = _entry(tmp_path, before, after, _tree("NormFn"))
    assert "not-carried-import" not in entry.rules, entry.reason
    assert entry.justification != "not-carried"


def test_an_import_a_ported_definition_uses_is_not_out_of_scope(tmp_path):
    before = DECORATED.replace("def norm_fwd(x):\n    return x / x.norm()",
                               "def norm_fwd(x):\n    return custom_fwd(x) / x.norm()")
    after = REBOUND.replace("def norm_fwd(x):\n    return x / x.norm()",
                            "def norm_fwd(x):\n    return custom_fwd(x) / x.norm()")
    entry = _entry(tmp_path, before, after, _tree("NormFn"))
    assert "not-carried-import" not in entry.rules, entry.reason
    assert entry.verdict != NOT_APPLICABLE, entry.reason


UNUSED = BEFORE.replace("import torch\n", "import torch\nfrom einops import rearrange\n", 1)


def test_an_import_removed_that_nothing_in_the_module_reads_is_cosmetic(tmp_path):
    entry = _entry(tmp_path, UNUSED, BEFORE, _tree("NormFn"))
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "cosmetic"), entry.reason
    assert "unused-import" in entry.rules


def test_an_import_removed_that_a_definition_still_reads_is_not_cosmetic(tmp_path):
    helper = "\n\ndef helper(x):\n    return rearrange(x, 'a b -> b a')\n"
    entry = _entry(tmp_path, UNUSED + helper, BEFORE + helper, _tree("NormFn"))
    assert "unused-import" not in entry.rules, entry.reason
    assert entry.justification != "cosmetic"


def test_an_import_removed_that_the_module_lists_in_all_is_not_cosmetic(tmp_path):
    listed = '\n__all__ = ["rearrange", "NormFn"]\n'
    entry = _entry(tmp_path, UNUSED + listed, BEFORE + listed, _tree("NormFn"))
    assert "unused-import" not in entry.rules, entry.reason


# --- which justification an all-NOT_APPLICABLE entry shows ---------------------------

SIBLING = "\n\ndef norm_fwd_fp8(x, scale):\n    return x * scale / x.norm()\n"


def test_a_ported_definitions_own_justification_is_the_entrys(tmp_path):
    after = BEFORE.replace("    return x / x.norm()\n", "    return x/x.norm()\n", 1) + SIBLING
    entry = _entry(tmp_path, BEFORE, after, _tree("NormFn"))
    symbols = {s.symbol: s for s in entry.symbols}
    assert symbols["norm_fwd_fp8"].justification == "not-ported"
    assert symbols["norm_fwd"].justification == "cosmetic", symbols["norm_fwd"].reason
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "cosmetic"), entry.reason


def test_without_a_ported_definition_a_coverage_hole_still_shows_first(tmp_path):
    entry = _entry(tmp_path, BEFORE, AFTER + SIBLING, _tree("NormFn"))
    assert {s.justification for s in entry.symbols} == {"not-carried", "not-ported"}
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-ported"), entry.reason


def test_an_import_commented_out_in_place_is_cosmetic(tmp_path):
    commented = BEFORE.replace("import torch\n", "import torch\n# from einops import rearrange\n", 1)
    entry = _entry(tmp_path, UNUSED, commented, _tree("NormFn"))
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "cosmetic"), entry.reason
    assert "unused-import" in entry.rules


def test_an_import_commented_out_that_code_after_a_comment_still_reads_is_not_cosmetic(tmp_path):
    helper = "\n\ndef helper(x):\n    # swap the axes\n    return rearrange(x, 'a b -> b a')\n"
    commented = BEFORE.replace("import torch\n", "import torch\n# from einops import rearrange\n", 1)
    entry = _entry(tmp_path, UNUSED + helper, commented + helper, _tree("NormFn"))
    assert "unused-import" not in entry.rules, entry.reason
    assert entry.justification != "cosmetic"
