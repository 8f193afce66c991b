"""A module moved byte for byte, its old path kept as a stub (``moved-module``): one commit writes the
whole old file unchanged at a new path and leaves at the old path a small module that binds the same
public names through a dispatcher. Every ported definition moves with its module (followed by
identity) and still reads the same module-level lines, now at the new path; the stub's lines are a new
module no ported definition reads. So the old path's changed module-level lines are cosmetic for the
port. A move that changes the file, or a stub that stops binding a public name, stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

OLD = "aiter/ops/triton/gather_kv_b_proj.py"
NEW = "aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"
MODULE = '''\
import torch
import triton
import triton.language as tl

from .utils import launch_options

SCALE = 2


@triton.jit
def _gather_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


def gather(x, out):
    n = x.numel()
    _gather_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128, **launch_options(x))
    return out
'''
STUB = '''\
from .dispatcher import FunctionDispatcher

gather = FunctionDispatcher('gather').make_caller()
'''
# Unsound neighbours.
CHANGED_MODULE = MODULE.replace("SCALE = 2", "SCALE = 3")
DROPPING_STUB = '''\
from .dispatcher import FunctionDispatcher

gather_all = FunctionDispatcher('gather_all').make_caller()
'''


def _tree() -> dict[str, str]:
    port = (
        "import triton\nimport triton.language as tl\n\n\n"
        f"# portq: ports vllm:{OLD}::_gather_kernel\n"
        "@triton.jit\n"
        "def _copy_kernel(src, dst, count, TILE: tl.constexpr):\n"
        "    i = tl.program_id(0) * TILE + tl.arange(0, TILE)\n"
        "    tl.store(dst + i, tl.load(src + i, mask=i < count) * 2, mask=i < count)\n\n\n"
        f"# portq: ports vllm:{OLD}::gather\n"
        "def gather_rows(x, out):\n"
        "    count = x.numel()\n"
        "    _copy_kernel[(triton.cdiv(count, 128),)](x, out, count, TILE=128)\n"
        "    return out\n"
    )
    caller = ("from portq_kernels.mla_prefix.gather import gather_rows\n\n\n"
              "def prepare(x, out):\n    return gather_rows(x, out)\n")
    return {"kernels/mla_prefix/gather.py": port, "kernels/mla_prefill/prepare.py": caller}


def _one_commit(tmp_path, moved, stub):
    return classify_commit(tmp_path, {OLD: MODULE}, {NEW: moved, OLD: stub}, _tree(), message="dispatcher")


def _toplevel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "<toplevel>" and s.path == OLD)


def test_a_module_moved_byte_for_byte_behind_a_stub_binding_the_same_names_is_cosmetic(tmp_path):
    verdict = _one_commit(tmp_path, MODULE, STUB)
    toplevel = _toplevel(verdict)
    assert toplevel.verdict == NOT_APPLICABLE and toplevel.justification == "cosmetic", toplevel.reason
    assert "moved-module" in toplevel.rules, toplevel.rules
    assert NEW in toplevel.reason, toplevel.reason
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason


def test_a_move_that_changes_the_module_is_still_flagged(tmp_path):
    verdict = _one_commit(tmp_path, CHANGED_MODULE, STUB)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "moved-module" not in verdict.rules


def test_a_stub_that_stops_binding_a_public_name_is_still_flagged(tmp_path):
    verdict = _one_commit(tmp_path, MODULE, DROPPING_STUB)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "moved-module" not in verdict.rules


SELF_TESTED = MODULE + '''

if __name__ == '__main__':

    def test_gather():
        x = torch.ones(8, device='cuda')
        assert gather(x, torch.empty_like(x)).sum() == 16

    test_gather()
'''
DEFINING_STUB = STUB + '''

def gather(x, out):
    return out
'''


def test_a_self_test_of_the_moved_module_need_not_be_bound_by_the_stub(tmp_path):
    tree = _tree()
    tree["kernels/mla_prefix/gather.py"] += (f"\n\n# portq: ports vllm:{OLD}::test_gather\n"
                                             "def check_gather():\n    pass\n")
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={OLD: SELF_TESTED}),
                   CommitSpec("dispatcher", files={NEW: SELF_TESTED, OLD: STUB})], tree)
    toplevel = _toplevel(verdicts[1])
    assert "moved-module" in toplevel.rules, toplevel.reason


def test_a_stub_that_defines_a_moved_name_again_is_still_flagged(tmp_path):
    verdict = _one_commit(tmp_path, MODULE, DEFINING_STUB)
    assert "moved-module" not in verdict.rules
    assert all("moved-module" not in s.rules for s in verdict.symbols)
