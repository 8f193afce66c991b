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
from tests.portq.golden.pipeline import classify_history

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
