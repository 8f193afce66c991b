"""Sources of tricky cases 45-46 (docs/tricky-cases.md): what is interface
and what is implementation on a re-implemented port, seen at the launch
(derived arguments) and one call down (a helper the ported wrapper calls)."""

from tests.portq.golden.cases import SPLAT_BEFORE, SPLAT_HOST, splat_tree

# --- 45: launch arguments upstream derives (held-out aiter 9a476446b2) --------------

DERIVED_HOST = SPLAT_HOST
DERIVED_BEFORE = SPLAT_BEFORE
DERIVED_AFTER = SPLAT_BEFORE.replace(
    "SEQ_LEN, BLOCK_D: tl.constexpr):", "SEQ_LEN, BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr,\n"
    "                       SPLIT: tl.constexpr):").replace(
    "    row = tl.program_id(0)\n", "    row = tl.program_id(0) * BLOCK_T // SPLIT\n").replace(
    "    t = x.shape[0]\n", "    t = x.shape[0]\n    BLOCK_T = 32\n    split = triton.next_power_of_2(t) // BLOCK_T\n").replace(
    "BLOCK_D=x.shape[1])", "BLOCK_D=x.shape[1], BLOCK_T=BLOCK_T, SPLIT=split)")
"""The kernel gains two tile constexprs; the wrapper computes both from a
constant and the input's shape."""

SUPPLIED_AFTER = DERIVED_AFTER.replace("def scale_rows(x, out):", "def scale_rows(x, out, block_t=32):").replace(
    "    BLOCK_T = 32\n", "    BLOCK_T = block_t\n")
"""The counter-case: the tile size is now a wrapper parameter a caller supplies."""


def derived_tree() -> dict[str, str]:
    """``splat_tree``'s re-implemented port, its kernel anchored too."""
    tree = splat_tree()
    port = tree["kernels/mla_prefix/rows.py"]
    tree["kernels/mla_prefix/rows.py"] = port.replace(
        "@triton.jit\ndef _double_kernel", f"# portq: ports vllm:{SPLAT_HOST}::_scale_rows_kernel\n"
        "@triton.jit\ndef _double_kernel")
    return tree
