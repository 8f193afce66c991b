"""Golden cases for ports that re-implement upstream rather than copy it
(docs/tricky-cases.md, cases 20-43): structure is compared modulo naming,
through local bindings and known equivalents, so a verdict never turns on
what a local is called. Each runs the real ``portq scan``."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from portq.cli import main
from portq.core.model import FLAGGED, IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden import reimplemented as r
from tests.portq.citation_check import reader, verify_report
from tests.portq.golden.pipeline import classify_history, classify_commit


def _scan(tmp_path, files_before, files_after, tree):
    return classify_commit(tmp_path, files_before, files_after, tree, message="change")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def _git(tmp_path, *args) -> list[str]:
    done = subprocess.run(["git", "-C", str(tmp_path / "upstream"), *args], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def _file_issue(tmp_path, position: int):
    """The JSON document and the markdown of ``portq file-issue`` for an entry of ``_scan``'s wave."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["file-issue", str(position), "--json", "--out", str(tmp_path / "reports"),
                     "--upstream", f"vllm={tmp_path / 'upstream'}", "--tree", str(tmp_path / "tree"),
                     "--matrix", str(tmp_path / "matrix.toml"), "--ledger", str(tmp_path / "ledger" / "ledger.sqlite")])
    assert code == 0
    document = json.loads(printed.getvalue())
    return document, Path(document["path"]).read_text()


@pytest.mark.parametrize("sms", ["sm_count", "num_sms"])
def test_a_grid_that_differs_only_in_names_is_in_sync_whatever_the_local_is_called(tmp_path, sms):
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.GRID_AFTER},
                    r.grid_tree(r.GRID_PORT_NEW.format(sms=sms)))
    host = _symbol(verdict, "copy_rows")
    assert host.verdict == IN_SYNC, host.reason
    assert "is upstream's new grid" in host.reason and "modulo naming" in host.reason
    assert verdict.verdict == IN_SYNC


def test_a_port_still_launching_the_old_grid_is_a_gap_through_cdiv_equivalence(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.GRID_AFTER}, r.grid_tree(r.GRID_PORT_OLD))
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (REAL_GAP, "launch"), host.reason
    grid = [e for e in host.evidence if e.kind == "launch-grid" and e.side == "upstream-new"]
    assert grid and grid[0].before is not None and grid[0].after is not None
    assert grid[0].before.line == 10 and grid[0].after.line == 11


def test_seed000_shape_in_a_cpp_port_compares_the_launch_through_its_locals(tmp_path):
    from tests.portq.golden import seed000
    verdict = _scan(tmp_path, {seed000_path(): seed000.BASE}, {seed000_path(): seed000.AFTER}, r.SEED_CPP_TREE)
    assert verdict.verdict == REAL_GAP
    host = _symbol(verdict, "gather_and_maybe_dequant_cache")
    assert host.verdict == REAL_GAP
    grid = next(e for e in host.evidence if e.kind == "launch-grid" and e.side == "upstream-new")
    assert (grid.before.line, grid.after.line) == (58, 68)  # `dim3 grid(...)` on both sides
    assert grid.after.quote == "dim3 grid(ceil_div(num_tokens, block_size) + 2 * num_reqs);"
    tree = [e for e in host.evidence if e.kind == "tree-launch" and "grid" in e.message]
    assert tree and tree[0].path == "kernels/kv_cache/gather.cu"
    # static_cast<unsigned>(num_tokens) is num_tokens: the grid is named first among the gaps
    assert host.reason.startswith("the port at kernels/kv_cache/gather.cu:24 still has the old shape (upstream grid went")
    assert "is still the old one" in host.reason
    # threads through locals: upstream's 64 became 128 or 256, the port's `threads` is still 64
    assert "block went 64 →" in host.reason
    assert any(e.kind == "tree-launch" and e.message == "the port's block is 64" for e in host.evidence)


def seed000_path():
    return "csrc/cache_kernels.cu"


def test_changes_confined_to_a_declared_not_carried_parameter_are_not_carried(tmp_path):
    verdict = _scan(tmp_path, {r.SCOPE_HOST: r.SCOPE_BEFORE}, {r.SCOPE_HOST: r.SCOPE_AFTER}, r.scope_tree(True))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "shuffled_kv_cache" in verdict.reason
    declared = [e for e in verdict.evidence if e.kind == "not-carried"]
    assert declared and declared[0].path == "kernels/mla_prefix/op.py"


def test_the_same_change_without_the_declaration_is_flagged(tmp_path):
    verdict = _scan(tmp_path, {r.SCOPE_HOST: r.SCOPE_BEFORE}, {r.SCOPE_HOST: r.SCOPE_AFTER}, r.scope_tree(False))
    assert verdict.verdict in FLAGGED


def test_a_change_outside_the_declared_scope_is_still_flagged(tmp_path):
    after = r.SCOPE_AFTER.replace("chunk = 16", "chunk = 64")
    verdict = _scan(tmp_path, {r.SCOPE_HOST: r.SCOPE_BEFORE}, {r.SCOPE_HOST: after}, r.scope_tree(True))
    assert verdict.verdict in FLAGGED


def test_a_new_kernel_the_tree_already_ports_claims_only_what_was_computed(tmp_path):
    verdict = _scan(tmp_path, {r.FLAT_KERNEL: r.FLAT_BEFORE}, {r.FLAT_KERNEL: r.FLAT_AFTER}, r.FLAT_TREE)
    flat = _symbol(verdict, "_triton_gather_kv_b_proj_flat")
    assert flat.verdict == IN_SYNC
    assert "every parameter" not in flat.reason
    assert "every one of its 5 runtime parameters, though not its constexpr paddedk, paddedv" in flat.reason
    lacking = [e for e in flat.evidence if e.kind == "tree-signature"]
    assert lacking and lacking[0].subject == "paddedk, paddedv" and lacking[0].path == "kernels/mla_prefix/op.py"


def test_broken_syntax_in_a_ported_function_lowers_confidence_and_says_where(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.BROKEN_AFTER}, r.grid_tree(r.GRID_PORT_OLD))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    host = _symbol(verdict, "copy_rows")
    assert host.verdict == NEEDS_REVIEW and host.decided_by == "fallback"
    assert f"parse failed at {r.CU}:12" in host.reason
    failures = [e for e in host.evidence if e.kind == "parse-failure"]
    assert failures and (failures[0].path, failures[0].line) == (r.CU, 12)
    assert not any(e.kind in ("param-dead", "launch-grid") for e in host.evidence)  # nothing decided from a broken tree


def test_program_ids_decomposed_inside_a_not_carried_helper_are_not_compared(tmp_path):
    verdict = _scan(tmp_path, {r.FLAT_KERNEL: r.DISPATCH_BEFORE}, {r.FLAT_KERNEL: r.DISPATCH_AFTER}, r.dispatch_tree())
    kernel = _symbol(verdict, "_triton_gather_kv_b_proj")
    # the carried body moved into _impl unchanged; the rest is the declared IS_FP4 dispatch
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "not-carried"), kernel.reason
    assert "program-id" not in kernel.reason and "matches neither" not in kernel.reason
    assert "lies in IS_FP4" in kernel.reason and "the carried body moved into _impl unchanged" in kernel.reason
    assert not any(e.kind == "program-id" and "num_batch_heads" in e.message for e in kernel.evidence)
    assert (_symbol(verdict, "_fp4_impl").verdict, _symbol(verdict, "_fp4_impl").justification) == (
        NOT_APPLICABLE, "not-carried")


def test_an_offset_computed_from_a_program_id_value_is_not_a_launch_geometry_change(tmp_path):
    verdict = _scan(tmp_path, {r.FLAT_KERNEL: r.DISPATCH_BEFORE}, {r.FLAT_KERNEL: r.OFFSET_AFTER}, r.OFFSET_TREE)
    kernel = _symbol(verdict, "_triton_gather_kv_b_proj")
    assert (kernel.verdict, kernel.decided_by) == (NEEDS_REVIEW, "body"), kernel.reason
    assert not any(e.kind in ("program-id", "launch-grid", "launch-block") for e in kernel.evidence)


def test_a_cpp_template_parameter_the_triton_port_takes_as_constexpr_is_in_sync(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.TEMPLATE_BEFORE}, {r.CU: r.TEMPLATE_AFTER},
                    r.template_tree(", BLOCK_STRIDE_ROWS: tl.constexpr = 4"))
    kernel = _symbol(verdict, "vllm::copy_rows_kernel")
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "constexpr block_stride_rows" in kernel.reason


def test_a_cpp_template_parameter_without_a_counterpart_is_for_a_reader_not_a_gap(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.TEMPLATE_BEFORE}, {r.CU: r.TEMPLATE_AFTER}, r.template_tree(""))
    kernel = _symbol(verdict, "vllm::copy_rows_kernel")
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "across languages a compile-time specialisation need not correspond" in kernel.reason
    assert verdict.verdict != REAL_GAP


def test_a_grid_computed_by_a_helper_imported_from_the_package_is_followed(tmp_path):
    from tests.portq.golden import seed000
    tree = r.imported_grid_tree()
    assert "page_task_grid(num_tokens, src_cache, cu_seq_lens)" in tree["kernels/kv_cache/gather.py"]
    verdict = _scan(tmp_path, {seed000_path(): seed000.BASE}, {seed000_path(): seed000.AFTER}, tree)
    host = _symbol(verdict, "gather_and_maybe_dequant_cache")
    assert host.verdict == IN_SYNC, host.reason
    grid = [e for e in host.evidence if e.kind == "tree-launch" and "the port's grid" in e.message]
    assert grid and "page_task_grid(num_tokens, src_cache, cu_seq_lens)" in grid[0].message
    assert not any(e.kind == "unresolved" for e in host.evidence)
    assert "grid" not in host.reason  # the grid matched: nothing about it is left undecided
    assert verdict.verdict == IN_SYNC


def test_a_changed_macro_no_ported_symbol_expands_is_not_ported_even_when_it_shares_identifiers(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.MACRO_BEFORE}, {r.CU: r.MACRO_SIBLING_AFTER}, r.MACRO_TREE)
    top = _symbol(verdict, "<toplevel>")
    assert (top.verdict, top.justification) == (NOT_APPLICABLE, "not-ported"), top.reason


def test_a_changed_macro_a_ported_symbol_uses_needs_review(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.MACRO_BEFORE}, {r.CU: r.MACRO_USED_AFTER}, r.MACRO_TREE)
    top = _symbol(verdict, "<toplevel>")
    assert top.verdict == NEEDS_REVIEW, top.reason
    assert "GATHER_TILE" in top.reason and "vllm::gather_rows_kernel" in top.reason


def test_a_cpp_grid_computed_in_an_included_header_is_followed(tmp_path):
    from tests.portq.golden import seed000
    verdict = _scan(tmp_path, {seed000_path(): seed000.BASE}, {seed000_path(): seed000.AFTER}, r.SYNCED_CPP_TREE)
    host = _symbol(verdict, "gather_and_maybe_dequant_cache")
    assert host.verdict == IN_SYNC, host.reason
    assert not any(e.kind == "unresolved" for e in host.evidence)
    grid = [e for e in host.evidence if e.kind == "tree-launch" and "port::page_task_grid" in e.message]
    assert grid and grid[0].path == "kernels/kv_cache/gather.cu"


def test_parameter_deltas_carry_both_sides_locations(tmp_path):
    from tests.portq.golden import seed000
    verdict = _scan(tmp_path, {seed000_path(): seed000.BASE}, {seed000_path(): seed000.AFTER}, r.SEED_CPP_TREE)
    dead = next(e for e in _symbol(verdict, "gather_and_maybe_dequant_cache").evidence if e.kind == "param-dead")
    assert dead.subject == "token_to_seq"
    assert (dead.before.side.value, dead.before.line) == ("upstream-old", 49)  # `torch::Tensor const& token_to_seq,`
    assert (dead.after.side.value, dead.after.line) == ("upstream-new", 56)


def test_an_import_that_follows_an_unchanged_file_move_changes_nothing(tmp_path):
    from tests.portq.test_dispatch_branches import BASE, WRAPPER, _tree

    arch = "def is_supported():\n    return True\n"
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={WRAPPER: BASE, "aiter/ops/triton/utils/arch_info.py": arch}),
        CommitSpec("move arch_info", renames={"aiter/ops/triton/utils/arch_info.py": "aiter/ops/triton/utils/arch.py"},
                   files={WRAPPER: BASE.replace("import aiter.ops.triton.utils.arch_info as arch_info",
                                                "import aiter.ops.triton.utils.arch as arch_info")}),
    ], _tree())
    top = _symbol(verdicts[1], "<toplevel>")
    assert (top.verdict, top.justification) == (NOT_APPLICABLE, "cosmetic"), top.reason


def test_a_program_id_decomposition_compares_through_the_ports_bindings(tmp_path):
    verdict = _scan(tmp_path, {r.FLAT_KERNEL: r.PACKED_BEFORE}, {r.FLAT_KERNEL: r.PACKED_AFTER}, r.PACKED_TREE)
    kernel = _symbol(verdict, "_expand_kernel")
    assert kernel.verdict == IN_SYNC, kernel.reason  # `item // per_row` with `per_row = C * H` is `pid // (H * C)`
    assert "decomposes the program id the new way" in kernel.reason


def test_a_port_is_indexed_again_when_a_helper_it_imports_changes(tmp_path):
    from portq.tree.tree_index import TreeIndex
    from tests.portq.golden.pipeline import write_tree

    tree = write_tree(tmp_path / "tree", r.imported_grid_tree())
    cache = tmp_path / "cache"

    def port_grid(index):
        definition = next(d for d in index.definitions_by_name["gather_and_maybe_dequant_cache"])
        return index.signature_of(definition).launches[0].grid_form

    before = port_grid(TreeIndex.build(tree, cache, ["kernels/"]))
    helper = tree / "kernels/kv_cache/_grid.py"
    helper.write_text(helper.read_text().replace("2 * (starts.shape[0] - 1)", "3 * (starts.shape[0] - 1)"))
    after = port_grid(TreeIndex.build(tree, cache, ["kernels/"]))
    assert before != after and "3 * cu_seq_lens.shape[0]" in after


def test_a_grid_assigned_again_later_resolves_to_the_assignment_that_reaches_the_launch(tmp_path):
    verdict = _scan(tmp_path, {r.REASSIGNED_HOST: r.REASSIGNED_BEFORE}, {r.REASSIGNED_HOST: r.REASSIGNED_AFTER},
                    r.REASSIGNED_TREE)
    host = _symbol(verdict, "copy_rows")
    # the launch after the early return still reads `grid = (triton.cdiv(n, 64),)`: no grid change is invented
    assert host.verdict != REAL_GAP, host.reason
    assert not any(e.kind == "launch-grid" for e in host.evidence), host.reason
    assert "cdiv(n, 256)" not in host.reason


def test_a_grid_two_branches_assign_is_unresolved_and_says_so(tmp_path):
    verdict = _scan(tmp_path, {r.REASSIGNED_HOST: r.REASSIGNED_BEFORE},
                    {r.REASSIGNED_HOST: r.REASSIGNED_BRANCHES_AFTER}, r.REASSIGNED_TREE)
    host = _symbol(verdict, "copy_rows")
    assert host.verdict == NEEDS_REVIEW, host.reason
    unresolved = [e for e in host.evidence if e.kind == "unresolved"]
    assert unresolved and "grid (assigned on more than one path to the launch)" in unresolved[0].message


def test_a_grid_helper_whose_returns_agree_is_one_form(tmp_path):
    tree = r.grid_helper_tree("min(triton.cdiv(n, 256), 4 * sms)")
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.GRID_AFTER}, tree)
    host = _symbol(verdict, "copy_rows")
    assert host.verdict == IN_SYNC, host.reason
    assert "is upstream's new grid" in host.reason
    assert not any(e.kind == "unresolved" for e in host.evidence)


def test_a_grid_helper_whose_returns_differ_is_compared_as_the_set_it_returns(tmp_path):
    tree = r.grid_helper_tree("triton.cdiv(n, 256)")  # the second return is upstream's old grid
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.GRID_AFTER}, tree)
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (NEEDS_REVIEW, "launch"), host.reason
    assert "is one of several forms, (oneof((cdiv(n, 256),), (min(4 * $sms, cdiv(n, 256)),)),)" in host.reason
    tree_grid = [e for e in host.evidence if e.kind == "tree-launch" and "grid" in e.message]
    assert tree_grid and "rows_grid(n, src.device)" in tree_grid[0].message


def test_a_new_kernel_the_port_already_launches_is_in_sync_only_when_the_grids_agree(tmp_path):
    def scan(flat_grid, where):
        return _symbol(_scan(tmp_path / where, {r.FLAT_HOST: r.FLAT_HOST_BEFORE},
                             {r.FLAT_HOST: r.FLAT_HOST_AFTER.format(flat_grid=flat_grid)}, r.FLAT_HOST_TREE),
                       "copy_rows")

    same = scan("(n + 63) // 64", "same")
    assert same.verdict == IN_SYNC, same.reason
    assert "with upstream's grid" in same.reason
    other = scan("n", "other")
    assert (other.verdict, other.decided_by) == (NEEDS_REVIEW, "launch"), other.reason
    assert "upstream now launches rows_flat with grid (n,) (vllm/ops/rows.py:7)" in other.reason
    assert "the port launches it with grid (cdiv(n, 64),) (kernels/kv_cache/rows.py:14), which differs" in other.reason
    lines = {(e.side, e.line) for e in other.evidence if e.kind in ("launch-grid", "tree-launch")}
    assert {("upstream-new", 7), ("tree", 14)} <= lines


@pytest.mark.parametrize("changed", [False, True])
def test_a_body_moved_into_a_helper_with_a_local_written_in_place_is_not_carried_only_if_unchanged(tmp_path, changed):
    after = r.MOVED_AFTER.replace("range((batch_size + 1) // 2)", "range((batch_size + 3) // 2)") \
        if changed else r.MOVED_AFTER
    verdict = _scan(tmp_path, {r.FLAT_KERNEL: r.MOVED_BEFORE}, {r.FLAT_KERNEL: after}, r.dispatch_tree())
    kernel = _symbol(verdict, "_triton_gather_kv_b_proj")
    if changed:
        assert kernel.verdict == NEEDS_REVIEW, kernel.reason
        assert "moved into" not in kernel.reason
    else:
        assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "not-carried"), kernel.reason
        assert "moved into _impl unchanged but for the local chunks written in place" in kernel.reason
        declared = [e for e in kernel.evidence if e.kind == "not-carried"]
        assert declared and "IS_FP4" in declared[0].message and declared[0].path == "kernels/mla_prefix/op.py"


def test_a_local_written_in_place_where_precedence_could_change_it_is_not_equal(tmp_path):
    before = r.MOVED_BEFORE.replace("range(chunks)", "range(chunks * 2)")
    after = r.MOVED_AFTER.replace("range((batch_size + 1) // 2)", "range((batch_size + 1) // 2 * 2)")
    verdict = _scan(tmp_path, {r.FLAT_KERNEL: before}, {r.FLAT_KERNEL: after}, r.dispatch_tree())
    assert _symbol(verdict, "_triton_gather_kv_b_proj").verdict == NEEDS_REVIEW


def _fp4_wrapper(tmp_path, after, declared=True):
    verdict = _scan(tmp_path, {r.SCOPE_HOST: r.FP4_HOST_BEFORE}, {r.SCOPE_HOST: after}, r.fp4_tree(declared))
    return _symbol(verdict, "gather_kv_b_proj")


def test_a_local_that_selects_only_the_declared_path_is_inside_the_declaration(tmp_path):
    assert "is_fp4_weight" in r.FP4_HOST_AFTER and "IS_FP4=True" in r.FP4_HOST_AFTER
    wrapper = _fp4_wrapper(tmp_path, r.FP4_HOST_AFTER)
    assert (wrapper.verdict, wrapper.justification) == (NOT_APPLICABLE, "not-carried"), wrapper.reason
    assert "is_fp4_weight only selects the branch that launches the declared path and returns" in wrapper.reason
    declared = [e for e in wrapper.evidence if e.kind == "not-carried" and e.side == "tree"]
    assert declared and "IS_FP4" in declared[0].message


@pytest.mark.parametrize("case", ["undeclared", "carried change", "no return"])
def test_a_dispatch_local_is_in_scope_only_when_that_is_all_the_commit_does(tmp_path, case):
    after = {"undeclared": r.FP4_HOST_AFTER,
             "carried change": r.FP4_HOST_AFTER.replace("        chunk = 16", "        chunk = 8"),
             "no return": r.FP4_HOST_AFTER.replace("        )\n        return\n", "        )\n")}[case]
    assert after != r.FP4_HOST_AFTER or case == "undeclared"
    wrapper = _fp4_wrapper(tmp_path, after, declared=case != "undeclared")
    assert wrapper.verdict in FLAGGED, wrapper.reason
def test_a_constexpr_a_heuristics_decorator_derives_from_received_arguments_is_for_a_reader(tmp_path):
    verdict = _scan(tmp_path, {r.HEURISTIC_KERNEL: r.heuristic_kernel()},
                    {r.HEURISTIC_KERNEL: r.heuristic_kernel(r.EVEN_MN_LAMBDA, "EVEN_MN")}, r.heuristic_tree())
    kernel = _symbol(verdict, "_gemm_kernel")
    assert (kernel.verdict, kernel.decided_by) == (NEEDS_REVIEW, "signature"), kernel.reason
    assert "@triton.heuristics" in kernel.reason and "even_mn" in kernel.reason
    assert verdict.verdict == NEEDS_REVIEW


def test_removing_a_heuristics_derived_constexpr_the_port_still_takes_is_for_a_reader(tmp_path):
    verdict = _scan(tmp_path, {r.HEURISTIC_KERNEL: r.heuristic_kernel(r.GRID_MN_LAMBDA, "GRID_MN")},
                    {r.HEURISTIC_KERNEL: r.heuristic_kernel()}, r.heuristic_tree("GRID_MN"))
    kernel = _symbol(verdict, "_gemm_kernel")
    assert (kernel.verdict, kernel.decided_by) == (NEEDS_REVIEW, "signature"), kernel.reason
    assert "@triton.heuristics" in kernel.reason and "grid_mn" in kernel.reason


def test_a_keyword_heuristics_table_computing_through_math_from_received_arguments_is_for_a_reader(tmp_path):
    before = r.keyword_heuristic(r.heuristic_kernel())
    after = r.keyword_heuristic(r.heuristic_kernel(r.ROUNDED_M_LAMBDA, "ROUNDED_M"))
    tree = {path: r.keyword_heuristic(text) for path, text in r.heuristic_tree().items()}
    verdict = _scan(tmp_path, {r.HEURISTIC_KERNEL: before}, {r.HEURISTIC_KERNEL: after}, tree)
    kernel = _symbol(verdict, "_gemm_kernel")
    assert (kernel.verdict, kernel.decided_by) == (NEEDS_REVIEW, "signature"), kernel.reason
    assert "@triton.heuristics" in kernel.reason and "rounded_m" in kernel.reason


def test_a_keyword_heuristics_table_calling_a_module_helper_is_still_a_gap(tmp_path):
    before = r.keyword_heuristic(r.heuristic_kernel())
    after = r.keyword_heuristic(r.heuristic_kernel(r.PICKED_M_LAMBDA, "ROUNDED_M"))
    tree = {path: r.keyword_heuristic(text) for path, text in r.heuristic_tree().items()}
    verdict = _scan(tmp_path, {r.HEURISTIC_KERNEL: before}, {r.HEURISTIC_KERNEL: after}, tree)
    kernel = _symbol(verdict, "_gemm_kernel")
    assert kernel.verdict == REAL_GAP, kernel.reason


def test_a_heuristic_that_reads_beyond_the_kernels_arguments_is_still_a_gap(tmp_path):
    verdict = _scan(tmp_path, {r.HEURISTIC_KERNEL: r.heuristic_kernel()},
                    {r.HEURISTIC_KERNEL: r.heuristic_kernel(r.OUTSIDE_LAMBDA, "EVEN_MN")}, r.heuristic_tree())
    kernel = _symbol(verdict, "_gemm_kernel")
    assert kernel.verdict == REAL_GAP, kernel.reason


def test_a_kernel_replaced_at_the_same_site_with_the_same_inputs_and_a_constant_is_for_a_reader(tmp_path):
    verdict = _scan(tmp_path, {r.SWAP_HOST: r.SWAP_BEFORE}, {r.SWAP_HOST: r.swap_after()}, r.SWAP_TREE)
    host = _symbol(verdict, "gemm_reduce")
    assert (host.verdict, host.decided_by) == (NEEDS_REVIEW, "launch"), host.reason
    assert "replaced reduce with splitk_reduce at the same launch site" in host.reason, host.reason
    assert verdict.verdict == NEEDS_REVIEW


def test_a_replacement_kernel_that_takes_a_new_caller_value_is_still_a_gap(tmp_path):
    verdict = _scan(tmp_path, {r.SWAP_HOST: r.SWAP_BEFORE},
                    {r.SWAP_HOST: r.swap_after(", SCALE=scale", ", scale=1.0")}, r.SWAP_TREE)
    host = _symbol(verdict, "gemm_reduce")
    assert host.verdict == REAL_GAP, host.reason


def test_a_replacement_kernel_given_a_value_derived_from_its_inputs_is_for_a_reader(tmp_path):
    verdict = _scan(tmp_path, {r.SWAP_HOST: r.SWAP_BEFORE}, {r.SWAP_HOST: r.swap_after(", SIZE=min(M, N) * 2")}, r.SWAP_TREE)
    host = _symbol(verdict, "gemm_reduce")
    assert host.verdict == NEEDS_REVIEW, host.reason


def test_a_top_level_name_only_upstreams_decorator_uses_is_not_the_ports_when_the_port_never_names_it(tmp_path):
    verdict = _scan(tmp_path, {r.REPR_KERNEL: r.REPR_BEFORE}, {r.REPR_KERNEL: r.REPR_AFTER}, r.repr_tree(False))
    toplevel = _symbol(verdict, "<toplevel>")
    assert (toplevel.verdict, toplevel.justification) == (NOT_APPLICABLE, "not-ported"), toplevel.reason
    assert verdict.verdict not in FLAGGED, verdict.reason


def test_the_same_decorator_name_is_for_a_reader_when_the_port_names_it(tmp_path):
    verdict = _scan(tmp_path, {r.REPR_KERNEL: r.REPR_BEFORE}, {r.REPR_KERNEL: r.REPR_AFTER}, r.repr_tree(True))
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == NEEDS_REVIEW, toplevel.reason


def test_a_new_sibling_whose_macros_do_not_parse_is_not_ported(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.SIBLING_AFTER}, r.grid_tree(r.GRID_PORT_OLD))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), verdict.reason
    assert {s.symbol for s in verdict.symbols} >= {"<toplevel>", "vllm::scale_rows_kernel", "scale_rows"}
    assert all((s.verdict, s.justification) == (NOT_APPLICABLE, "not-ported") for s in verdict.symbols), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    top = _symbol(verdict, "<toplevel>")
    assert "LAUNCH_SCALED_ROWS" in top.reason  # the broken lines are the macro's, and no port expands it


def test_a_ported_host_expanding_a_macro_that_does_not_parse_needs_review(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.EXPANDED_AFTER}, r.grid_tree(r.GRID_PORT_OLD))
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (NEEDS_REVIEW, "fallback"), host.reason
    assert f"parse failed at {r.CU}:7" in host.reason and "LAUNCH_SCALED_ROWS" in host.reason
    assert not any(e.kind in ("launch-grid", "launch-kernel") for e in host.evidence)


def test_a_broken_macro_no_port_expands_does_not_lower_a_change_to_a_ported_host(tmp_path):
    after = r.SIBLING_AFTER.replace("  dim3 grid((n + 255) / 256);",
                                    "  const int num_sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;\n"
                                    "  dim3 grid(std::min((n + 255) / 256, 4 * num_sms));", 1)
    verdict = _scan(tmp_path, {r.CU: r.SIBLING_AFTER}, {r.CU: after}, r.grid_tree(r.GRID_PORT_OLD))
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (REAL_GAP, "launch"), host.reason


def test_a_grid_change_in_a_binding_is_compared_past_an_unresolved_call_both_sides_share(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.QUANT_BEFORE}, {r.CU: r.QUANT_AFTER}, r.quant_tree("k.size(0)"))
    host = _symbol(verdict, "quant_cache")
    assert (host.verdict, host.decided_by) == (REAL_GAP, "launch"), host.reason
    assert "device::warp_size" in host.reason and "the same on both upstream sides" in host.reason
    assert "is still the old one" in host.reason
    grid = [e for e in host.evidence if e.kind == "launch-grid" and e.side == "upstream-new"]
    assert grid and grid[0].before is not None and grid[0].after is not None
    # the grid line reads the same on both sides: the change cited is the binding, the launch is context
    assert (grid[0].before.line, grid[0].before.quote) == (15, "int num_tokens = k.size(0);")
    assert (grid[0].after.line, grid[0].after.quote) == (15, "int num_tokens = std::min(k.size(0), slot_mapping.size(0));")
    assert grid[0].through == ("num_tokens",)
    assert (grid[0].line, grid[0].quote) == (22, "vllm::quant_cache_kernel<8, 4><<<grid, block, 0, stream>>>(")
    assert "launch at" in grid[0].message
    old = next(e for e in host.evidence if e.kind == "launch-grid" and e.side == "upstream-old")
    assert old.before == grid[0].before and old.through == ("num_tokens",)


def test_a_grid_changed_through_a_binding_is_reported_at_the_binding(tmp_path):
    _scan(tmp_path, {r.CU: r.QUANT_BEFORE}, {r.CU: r.QUANT_AFTER}, r.quant_tree("k.size(0)"))
    document, markdown = _file_issue(tmp_path, 1)
    assert "`csrc/cache_kernels.cu:15`: `int num_tokens = k.size(0);`" in markdown
    assert "`csrc/cache_kernels.cu:15`: `int num_tokens = std::min(k.size(0), slot_mapping.size(0));`" in markdown
    assert "launch at `csrc/cache_kernels.cu:20-22`" in markdown
    assert document["title"].startswith("perf(")
    verify_report(markdown, document, reader(tmp_path / "tree", tmp_path / "upstream", _git(tmp_path, "rev-parse", "HEAD")[0]),
                  (tmp_path / "matrix.toml").read_text())


def test_a_triton_grid_changed_through_a_local_cites_the_local(tmp_path):
    verdict = _scan(tmp_path, {r.REASSIGNED_HOST: r.BOUND_ROWS_BEFORE}, {r.REASSIGNED_HOST: r.BOUND_ROWS_AFTER},
                    r.REASSIGNED_TREE)
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (REAL_GAP, "launch"), host.reason
    grid = next(e for e in host.evidence if e.kind == "launch-grid" and e.side == "upstream-new")
    assert (grid.before.line, grid.before.quote) == (6, "rows = n")
    assert (grid.after.line, grid.after.quote) == (6, "rows = min(n, x.shape[0])")
    assert grid.through == ("rows",) and (grid.line, grid.quote) == (8, "_rows_kernel[grid](x, y, n, BLOCK=64)")
    document, markdown = _file_issue(tmp_path, 1)
    assert "- before `vllm/ops/rows.py:6`: `rows = n`" in markdown
    assert "- after `vllm/ops/rows.py:6`: `rows = min(n, x.shape[0])`" in markdown
    verify_report(markdown, document, reader(tmp_path / "tree", tmp_path / "upstream", _git(tmp_path, "rev-parse", "HEAD")[0]),
                  (tmp_path / "matrix.toml").read_text())


def test_threads_changed_in_the_local_a_launch_names_cite_that_local(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.THREADS_BEFORE}, {r.CU: r.THREADS_AFTER}, r.THREADS_TREE)
    host = _symbol(verdict, "scale_rows")
    assert (host.verdict, host.decided_by) == (REAL_GAP, "launch"), host.reason
    block = next(e for e in host.evidence if e.kind == "launch-block" and e.side == "upstream-new")
    assert (block.before.line, block.before.quote) == (10, "const int threads = 256;")
    assert (block.after.line, block.after.quote) == (10, "const int threads = 128;")
    assert block.through == ("threads",) and block.line == 12
    document, markdown = _file_issue(tmp_path, 1)
    assert "- the launch's block changed through threads:\n  - before `csrc/cache_kernels.cu:10`" in markdown
    assert "launch at `csrc/cache_kernels.cu:12`" in markdown
    sha = _git(tmp_path, "rev-parse", "HEAD")[0]
    verify_report(markdown, document, reader(tmp_path / "tree", tmp_path / "upstream", sha),
                  (tmp_path / "matrix.toml").read_text())


def test_a_helper_launch_reached_from_two_calls_passing_different_values_is_unresolved(tmp_path):
    # `_launch_rows(x.local_rows(), y)` on a new path, `_launch_rows(x, y)` kept on the other: the grid read
    # through the helper's parameter depends on the path, so the port's old grid is no certain gap
    verdict = _scan(tmp_path, {r.CALLED_TWICE_HOST: r.CALLED_TWICE_BEFORE}, {r.CALLED_TWICE_HOST: r.CALLED_TWICE_AFTER},
                    r.CALLED_TWICE_TREE)
    host = _symbol(verdict, "copy_rows")
    assert host.verdict == NEEDS_REVIEW, host.reason
    unresolved = [e for e in host.evidence if e.kind == "unresolved"]
    assert unresolved and "passed differently at the calls that reach the launch" in unresolved[0].message


def test_a_helper_launch_whose_one_call_passes_another_value_is_still_a_gap(tmp_path):
    verdict = _scan(tmp_path, {r.CALLED_TWICE_HOST: r.CALLED_TWICE_BEFORE},
                    {r.CALLED_TWICE_HOST: r.CALLED_ONCE_CHANGED_AFTER}, r.CALLED_TWICE_TREE)
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (REAL_GAP, "launch"), host.reason


def test_num_warps_changed_in_the_local_a_triton_launch_names_cite_that_local(tmp_path):
    verdict = _scan(tmp_path, {r.REASSIGNED_HOST: r.WARPS_BEFORE}, {r.REASSIGNED_HOST: r.WARPS_AFTER}, r.WARPS_TREE)
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (REAL_GAP, "launch"), host.reason
    warps = next(e for e in host.evidence if e.kind == "launch-block" and e.side == "upstream-new")
    assert (warps.subject, warps.through) == ("num_warps", ("warps",))
    assert (warps.before.line, warps.before.quote, warps.after.quote) == (6, "warps = 4", "warps = 8")


def test_a_grid_whose_own_line_changed_still_cites_that_line(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: r.GRID_AFTER}, r.grid_tree(r.GRID_PORT_OLD))
    grid = next(e for e in _symbol(verdict, "copy_rows").evidence if e.kind == "launch-grid" and e.side == "upstream-new")
    assert grid.through == () and grid.before.quote != grid.after.quote


def test_a_port_with_the_new_binding_is_in_sync_past_the_shared_unresolved_call(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.QUANT_BEFORE}, {r.CU: r.QUANT_AFTER},
                    r.quant_tree("std::min(k.size(0), slot_mapping.size(0))"))
    host = _symbol(verdict, "quant_cache")
    assert host.verdict == IN_SYNC, host.reason
    assert "the same on both upstream sides" in host.reason


def test_a_change_to_the_unresolved_part_itself_still_cannot_be_compared(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.QUANT_BEFORE}, {r.CU: r.QUANT_WARP_AFTER}, r.quant_tree("k.size(0)"))
    host = _symbol(verdict, "quant_cache")
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "could not be resolved" in host.reason


def test_a_broken_line_that_swallows_a_ported_definition_lowers_the_entry(tmp_path):
    # an unterminated template header: tree-sitter folds the ported host that follows into the error
    after = r.GRID_AFTER.replace("void copy_rows(", "template <typename T\nvoid copy_rows(")
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: after}, r.grid_tree(r.GRID_PORT_OLD))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "lost the ported definition copy_rows" in verdict.reason
    assert any(e.kind == "parse-failure" for e in verdict.evidence)


def test_a_changed_namespace_line_around_a_ported_definition_is_still_the_ports(tmp_path):
    after = r.GRID_BEFORE.replace("namespace vllm {", "namespace vllm::rows {").replace("}  // namespace vllm",
                                                                                        "}  // namespace vllm::rows")
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE}, {r.CU: after}, r.grid_tree(r.GRID_PORT_OLD))
    assert verdict.verdict in FLAGGED, verdict.reason


@pytest.mark.parametrize("port, expected", [(r.GRID_PORT_OLD, REAL_GAP), (r.GRID_PORT_NEW.format(sms="sms"), IN_SYNC)])
def test_a_cpp_grid_resolves_through_the_assignment_that_reaches_the_launch(tmp_path, port, expected):
    verdict = _scan(tmp_path, {r.CU: r.REASSIGNED_CPP_BEFORE}, {r.CU: r.REASSIGNED_CPP_AFTER}, r.grid_tree(port))
    host = _symbol(verdict, "copy_rows")
    assert (host.verdict, host.decided_by) == (expected, "launch"), host.reason


def test_a_cpp_grid_local_assigned_on_one_path_only_is_unresolved(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.REASSIGNED_CPP_BEFORE}, {r.CU: r.REASSIGNED_CPP_BRANCH_AFTER},
                    r.grid_tree(r.GRID_PORT_OLD))
    host = _symbol(verdict, "copy_rows")
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "blocks (assigned on more than one path to the launch)" in host.reason


def test_a_cpp_kernels_block_index_decomposition_is_compared_with_the_ports_program_id(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.PACKED_CPP_BEFORE}, {r.CU: r.PACKED_CPP_AFTER},
                    r.packed_cpp_tree(r.PACKED_CPP_NEW, "B * H * C"))
    kernel = _symbol(verdict, "vllm::expand_heads_kernel")
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "the port already decomposes the program id the new way" in kernel.reason
    assert verdict.verdict == IN_SYNC, verdict.reason


def test_a_port_with_the_new_grid_but_the_old_decomposition_is_behind(tmp_path):
    verdict = _scan(tmp_path, {r.CU: r.PACKED_CPP_BEFORE}, {r.CU: r.PACKED_CPP_AFTER},
                    r.packed_cpp_tree(r.PACKED_CPP_OLD, "B * H * C"))
    kernel = _symbol(verdict, "vllm::expand_heads_kernel")
    assert (kernel.verdict, kernel.decided_by) == (REAL_GAP, "launch"), kernel.reason
    assert "still decomposes it the old way" in kernel.reason
    ids = [e for e in kernel.evidence if e.kind == "program-id" and e.side == "upstream-new"]
    assert ids and ids[0].path == r.CU and ids[0].line == 6  # `const int c = item % C;`


def test_a_parse_failure_of_another_touched_symbol_is_cited_not_pasted(tmp_path):
    # one half a REAL_GAP (num_warps through a local), the other a host expanding a macro that does not parse
    verdict = _scan(tmp_path, {r.CU: r.GRID_BEFORE, r.REASSIGNED_HOST: r.WARPS_BEFORE},
                    {r.CU: r.EXPANDED_AFTER, r.REASSIGNED_HOST: r.WARPS_AFTER},
                    {**r.grid_tree(r.GRID_PORT_OLD), **r.WARPS_TREE})
    assert verdict.verdict == REAL_GAP, verdict.reason
    also = next(e for e in verdict.evidence if e.kind == "symbol" and e.symbol == "copy_rows" and e.path == r.CU)
    failure = next(e for e in also.records if e.kind == "parse-failure")
    assert (failure.side, failure.path, failure.line) == ("upstream-new", r.CU, 7)
    assert failure.quote.startswith("KERNEL<<<scaled_grid")
    document, markdown = _file_issue(tmp_path, 1)
    cited = f"`{r.CU}:7`: `KERNEL<<<scaled_grid, dim3(256), 0, stream>>>(src.data_ptr<float>(), \\`"
    assert f"parse failed at {cited} (upstream-new), in the macro LAUNCH\\_SCALED\\_ROWS" in markdown
    verify_report(markdown, document, reader(tmp_path / "tree", tmp_path / "upstream", _git(tmp_path, "rev-parse", "HEAD")[0]),
                  (tmp_path / "matrix.toml").read_text())
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        assert main(["show", "1", "--upstream", f"vllm={tmp_path / 'upstream'}", "--tree", str(tmp_path / "tree"),
                     "--matrix", str(tmp_path / "matrix.toml"), "--ledger", str(tmp_path / "ledger" / "ledger.sqlite")]) == 0
    line = next(t for t in shown.getvalue().splitlines() if f"also touched: {r.CU}::copy_rows" in t)
    assert f"parse failed at {r.CU}:7: `KERNEL<<<scaled_grid, dim3(256), 0, stream>>>(" in line
