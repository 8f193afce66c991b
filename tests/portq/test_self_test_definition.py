"""A module's own self-test (``self-test-definition``): a definition named as a test, one the module's
``if __name__ == "__main__":`` block calls, or one only those call (a reference implementation the test
compares against), that no other code of the module reaches, and whose copy nothing in the tree calls.
Rewriting, adding or deleting it changes nothing a ported definition runs: NOT_APPLICABLE, never a body
change for a reader. A helper the module's own code also calls, a public definition nothing in the
module calls (other modules may), or a copy the tree calls stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def double(x):
    n = x.numel()
    _double_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
    return x


def torch_double(x):
    return x * 2


def test():
    x = torch.randn(1000, device="cuda")
    assert torch.allclose(double(x.clone()), torch_double(x))
'''

AFTER = BEFORE.replace('''def torch_double(x):
    return x * 2


def test():
    x = torch.randn(1000, device="cuda")
    assert torch.allclose(double(x.clone()), torch_double(x))
''', '''def test():
    for n in (1, 1000, 4097):
        x = torch.randn(n, device="cuda")
        assert torch.allclose(double(x.clone()), x * 2)


def reference_half(x):
    return x / 2


def test2():
    x = torch.randn(64, device="cuda")
    assert torch.allclose(reference_half(double(x.clone())), x)


if __name__ == "__main__":
    test()
    test2()
''')


def _tree(extra_caller: str = "") -> dict[str, str]:
    copy = BEFORE
    for name in ("_double_kernel", "double", "torch_double", "test"):
        marker = "@triton.jit\ndef _double_kernel" if name == "_double_kernel" else f"def {name}("
        copy = copy.replace(marker, f"# portq: ports vllm:{OPS}::{name}\n{marker}", 1)
    caller = "from portq_kernels.mla_prefix.ops import double\n\n\ndef run(x):\n    return double(x)\n" + extra_caller
    return {"kernels/mla_prefix/ops.py": copy, "kernels/mla_prefill/run.py": caller}


def _entry(tmp_path, after, tree=None, before=BEFORE):
    return classify_commit(tmp_path, {OPS: before}, {OPS: after}, tree or _tree(), message="tests")


def test_a_rewritten_self_test_and_its_deleted_reference_are_not_the_ports_change(tmp_path):
    verdict = _entry(tmp_path, AFTER)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    by_name = {(s.symbol, s.change): s for s in verdict.symbols}
    for key in (("test", "modified"), ("torch_double", "removed")):
        assert by_name[key].verdict == NOT_APPLICABLE, (key, by_name[key].reason)
        assert "self-test-definition" in by_name[key].rules, (key, by_name[key].rules)


def test_a_self_test_the_tree_calls_stays_flagged(tmp_path):
    tree = _tree("\n\nfrom portq_kernels.mla_prefix.ops import test\n\n\ndef check():\n    test()\n")
    verdict = _entry(tmp_path, AFTER, tree)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_helper_the_module_itself_calls_stays_flagged(tmp_path):
    before = BEFORE.replace("    n = x.numel()\n", "    n = x.numel()\n    torch_double(x[:0])\n")
    after = before.replace("    return x * 2\n", "    return x + x\n")
    tree = _tree()
    tree["kernels/mla_prefix/ops.py"] = tree["kernels/mla_prefix/ops.py"].replace(
        "    n = x.numel()\n", "    n = x.numel()\n    torch_double(x[:0])\n")
    verdict = _entry(tmp_path, after, tree, before=before)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_public_definition_nothing_in_the_module_calls_stays_flagged(tmp_path):
    # torch_double, named as no test, is called by nothing in the module: other modules may call it.
    before = BEFORE.replace("double(x.clone()), torch_double(x))", "double(x.clone()), x * 2)")
    after = before.replace("    return x * 2\n", "    return x + x\n")
    verdict = _entry(tmp_path, after, before=before)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
