"""A library call respelled as the call its library defines it to be
(docs/tricky-cases.md, "form without meaning"): CuTe DSL's
``cute.arch.fence_view_async_shared()`` is, in the library's own source, the
call ``fence_proxy(kind="async.shared", space="cta")``, so a kernel that
replaces one by the other issues the same fence (``documented-equivalent-call``,
cosmetic). Another proxy kind or space, a name bound to a module of the
project's own, a local that shadows the module, and another change beside
the respelling stay flagged, and so do enum arguments respelled as the strings
the DSL's generated bindings map them to (no source to cite).

Each runs the real ``portq scan`` over a small synthetic history of one commit."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm backward"
upstream = "vllm"
paths    = ["ops/norm.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

UPSTREAM = '''\
import cutlass
{binding}


class NormBackward:
    def kernel(self, x, y):
        z = x + y
        if cutlass.const_expr(self.cluster_n > 1):
            {fence}
        return z
'''

PORT = '''\
# portq: ports vllm:ops/norm.py::NormBackward.kernel
def norm_backward_kernel(self, x, y):
    z = x + y
    return z
'''

TREE = {"kernels/norm.py": PORT,
        "engine/run.py": "from kernels.norm import norm_backward_kernel\n\n\n"
                         "def step(m, x, y):\n    return norm_backward_kernel(m, x, y)\n"}

OLD_FENCE = 'cute.arch.fence_proxy("async.shared", space="cta")'
NEW_FENCE = "cute.arch.fence_view_async_shared()"
CUTE = "import cutlass.cute as cute"


def _verdict(tmp_path, new_fence=NEW_FENCE, old_fence=OLD_FENCE, binding=CUTE, after=None):
    before = UPSTREAM.format(binding=binding, fence=old_fence)
    after = after or UPSTREAM.format(binding=binding, fence=new_fence)
    return classify_commit(tmp_path, {"ops/norm.py": before}, {"ops/norm.py": after}, TREE, matrix=MATRIX)


def _why(verdict):
    return [(s.symbol, s.verdict, s.justification, s.rules, s.reason) for s in verdict.symbols]


def test_the_fence_respelled_as_its_documented_helper_is_cosmetic(tmp_path):
    verdict = _verdict(tmp_path)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _why(verdict)
    assert "documented-equivalent-call" in verdict.rules, verdict.rules


def test_the_helper_respelled_as_the_keyword_call_it_makes_is_cosmetic(tmp_path):
    verdict = _verdict(tmp_path, old_fence=NEW_FENCE,
                       new_fence='cute.arch.fence_proxy(kind="async.shared", space="cta")')
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _why(verdict)
    assert "documented-equivalent-call" in verdict.rules, verdict.rules


def test_another_space_stays_flagged(tmp_path):
    verdict = _verdict(tmp_path, old_fence='cute.arch.fence_proxy("async.shared", space="cluster")')
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "documented-equivalent-call" not in verdict.rules


def test_another_proxy_kind_stays_flagged(tmp_path):
    verdict = _verdict(tmp_path, old_fence='cute.arch.fence_proxy("async.global", space="cta")')
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "documented-equivalent-call" not in verdict.rules


def test_a_module_of_the_projects_own_stays_flagged(tmp_path):
    verdict = _verdict(tmp_path, binding="from ops import fences as cute")
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "documented-equivalent-call" not in verdict.rules


def test_a_local_shadowing_the_module_stays_flagged(tmp_path):
    shadowed = UPSTREAM.replace("z = x + y\n", "z = x + y\n        cute = self.backend\n")
    verdict = classify_commit(tmp_path, {"ops/norm.py": shadowed.format(binding=CUTE, fence=OLD_FENCE)},
                              {"ops/norm.py": shadowed.format(binding=CUTE, fence=NEW_FENCE)}, TREE, matrix=MATRIX)
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "documented-equivalent-call" not in verdict.rules


def test_another_change_beside_the_respelling_stays_flagged(tmp_path):
    after = UPSTREAM.format(binding=CUTE, fence=NEW_FENCE).replace("z = x + y", "z = x - y")
    verdict = _verdict(tmp_path, after=after)
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "documented-equivalent-call" not in verdict.rules


def test_enum_arguments_respelled_as_strings_stay_flagged(tmp_path):
    # The DSL maps an enum member to its string through generated bindings, not a source the table can cite.
    verdict = _verdict(tmp_path, old_fence="cute.arch.fence_proxy(cute.arch.ProxyKind.async_shared, "
                                           "space=cute.arch.SharedSpace.shared_cta)",
                       new_fence=OLD_FENCE)
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "documented-equivalent-call" not in verdict.rules
