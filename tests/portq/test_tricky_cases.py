"""Golden tricky cases (docs/tricky-cases.md), end to end: a GitPython
upstream history, an in-tree directory, the matrix, and the classifier the
scan uses. Each test names the case and the verdict it must get."""
from __future__ import annotations

import pytest

from portq.core.model import FLAGGED, IN_SYNC, INERT, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden import seed000
from tests.portq.golden.pipeline import classify_history

UPSTREAM_CU = "csrc/cache_kernels.cu"


def _seed000(tmp_path, tree):
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={UPSTREAM_CU: seed000.BASE}), CommitSpec(seed000.TITLE, files={UPSTREAM_CU: seed000.AFTER})],
        tree,
    )
    return verdicts[1]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_seed000_two_half_commit_is_real_gap_with_a_production_caller(tmp_path):
    verdict = _seed000(tmp_path, seed000.STALE_TREE)
    assert verdict.verdict == REAL_GAP
    wrapper = _symbol(verdict, "gather_and_maybe_dequant_cache")
    assert wrapper.verdict == REAL_GAP
    callers = [e for e in wrapper.evidence if e.kind == "caller"]
    assert callers[0].path == "kernels/mla_prefill/chunked_context.py" and callers[0].line == 6
    assert "gather_and_maybe_dequant_cache(" in callers[0].quote


def test_seed000_evidence_names_both_halves(tmp_path):
    verdict = _seed000(tmp_path, seed000.STALE_TREE)
    sibling = _symbol(verdict, "cp_gather_cache")
    assert (sibling.verdict, sibling.justification) == (NOT_APPLICABLE, "not-carried")
    messages = " ".join(e.message for e in verdict.evidence)
    assert "cp_gather_cache" in messages and "not-carried" in messages
    assert any(e.hunk_header and "gather_and_maybe_dequant_cache" in e.hunk_header for e in verdict.evidence)


def test_seed000_dead_token_to_seq_is_cited_in_tree_and_upstream(tmp_path):
    wrapper = _symbol(_seed000(tmp_path, seed000.STALE_TREE), "gather_and_maybe_dequant_cache")
    dead = [e for e in wrapper.evidence if e.kind == "param-dead"]
    assert dead and dead[0].side == "upstream-new"
    uses = [e for e in wrapper.evidence if e.kind == "tree-use"]
    assert uses[0].path == "kernels/kv_cache/gather.py" and "token_to_seq" in uses[0].quote


def test_seed000_launch_rewrite_is_a_launch_delta(tmp_path):
    wrapper = _symbol(_seed000(tmp_path, seed000.STALE_TREE), "gather_and_maybe_dequant_cache")
    grids = [e for e in wrapper.evidence if e.kind == "launch-grid" and e.side == "upstream-new"]
    assert grids and "ceil_div(num_tokens, block_size) + 2 * num_reqs" in grids[0].message
    tree = [e for e in wrapper.evidence if e.kind == "tree-launch"]
    assert any("grid" in e.message and "num_tokens," in e.message for e in tree)


def test_seed000_against_a_tree_that_already_dropped_it_is_in_sync(tmp_path):
    verdict = _seed000(tmp_path, seed000.SYNCED_TREE)
    assert verdict.verdict == IN_SYNC
    assert _symbol(verdict, "gather_and_maybe_dequant_cache").verdict == IN_SYNC


def test_seed000_against_a_tree_only_tests_call_is_inert(tmp_path):
    verdict = _seed000(tmp_path, seed000.TESTS_ONLY_TREE)
    assert verdict.verdict == INERT
    callers = [e for e in verdict.evidence if e.kind == "caller"]
    assert callers and all(e.path.startswith("tests/") for e in callers)


# --- the other tricky cases -----------------------------------------------------------

from tests.portq.golden import cases  # noqa: E402
from tests.portq.golden.pipeline import MATRIX  # noqa: E402


def _one_commit(tmp_path, path, before, after, tree, message="change", matrix=MATRIX, extra=None):
    files_before = {path: before, **(extra or {})}
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files=files_before), CommitSpec(message, files={path: after})], tree, matrix
    )
    return verdicts[1]


def test_seed002_op_gains_seq_starts_and_the_port_lacks_it_is_real_gap(tmp_path):
    verdict = _one_commit(tmp_path, cases.OPS_PATH, cases.OPS_BEFORE, cases.OPS_AFTER, cases.nvfp4_tree(False))
    assert (verdict.verdict, verdict.decided_by) == (REAL_GAP, "signature")
    added = [e for e in verdict.evidence if e.kind == "param-added"]
    assert added and "seq_starts=default" in added[0].message and added[0].side == "upstream-new"


def test_seed002_port_that_has_seq_starts_is_in_sync(tmp_path):
    verdict = _one_commit(tmp_path, cases.OPS_PATH, cases.OPS_BEFORE, cases.OPS_AFTER, cases.nvfp4_tree(True))
    assert verdict.verdict == IN_SYNC


def test_squash_message_claiming_a_grid_change_is_decided_from_the_diff(tmp_path):
    verdict = _one_commit(tmp_path, cases.SPARSE_PATH, cases.SPARSE_BEFORE, cases.SPARSE_BODY_FIX, cases.SPARSE_TREE,
                          message="[Perf] Launch the index conversion on a 3-D grid (#4242)")
    assert (verdict.verdict, verdict.decided_by) == (NEEDS_REVIEW, "body")
    assert not any(e.kind.startswith("launch") for e in verdict.evidence)


def _prefix(tmp_path, tree):
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={cases.PREFIX_HOST: cases.PREFIX_HOST_BEFORE, cases.PREFIX_KERNEL: cases.PREFIX_KERNEL_BEFORE}),
         CommitSpec("perf(mla): chunk the non-FP4 gather over KV",
                    files={cases.PREFIX_HOST: cases.PREFIX_HOST_AFTER, cases.PREFIX_KERNEL: cases.PREFIX_KERNEL_AFTER})],
        tree,
    )
    return verdicts[1]


def test_one_d_launch_packing_more_work_into_program_id_is_a_launch_gap(tmp_path):
    verdict = _prefix(tmp_path, cases.prefix_tree(cases.PREFIX_KERNEL_BEFORE, cases.PREFIX_HOST_BEFORE))
    assert verdict.verdict == REAL_GAP
    kernel = next(s for s in verdict.symbols if s.symbol == "_triton_gather_kv_b_proj")
    assert (kernel.verdict, kernel.decided_by) in ((REAL_GAP, "launch"), (REAL_GAP, "signature"))
    assert any(e.kind == "program-id" and e.side == "upstream-new" for e in kernel.evidence)
    host = next(s for s in verdict.symbols if s.symbol == "gather_kv_b_proj")
    assert host.verdict == REAL_GAP
    assert any(e.kind == "launch-grid" and "B * H * C" in e.message for e in host.evidence)


def test_one_d_launch_already_packed_in_tree_is_in_sync(tmp_path):
    verdict = _prefix(tmp_path, cases.prefix_tree(cases.PREFIX_KERNEL_AFTER, cases.PREFIX_HOST_AFTER))
    assert verdict.verdict == IN_SYNC


def test_new_sibling_kernel_dispatched_from_the_ported_wrapper_is_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, UPSTREAM_CU, cases.WRITE_BEFORE, cases.WRITE_AFTER, cases.WRITE_TREE)
    assert (verdict.verdict, verdict.decided_by) == (REAL_GAP, "launch")
    launched = [e for e in verdict.evidence if e.kind == "launch-kernel"]
    assert "concat_and_cache_ds_mla" in launched[0].message
    sibling = next(s for s in verdict.symbols if s.symbol == "vllm::concat_and_cache_ds_mla_kernel")
    assert (sibling.verdict, sibling.justification) == (NOT_APPLICABLE, "not-ported")


def test_body_only_fix_on_a_ported_kernel_needs_review(tmp_path):
    verdict = _one_commit(tmp_path, cases.SPARSE_PATH, cases.SPARSE_BEFORE, cases.SPARSE_BODY_FIX, cases.SPARSE_TREE)
    assert verdict.verdict == NEEDS_REVIEW
    assert "never NOT_APPLICABLE" in verdict.reason


def test_comment_and_format_only_change_on_a_ported_kernel_is_cosmetic(tmp_path):
    verdict = _one_commit(tmp_path, cases.SPARSE_PATH, cases.SPARSE_BEFORE, cases.SPARSE_COMMENT_ONLY, cases.SPARSE_TREE)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic")


@pytest.mark.parametrize("path, before, after", [
    (".buildkite/test-pipeline.yaml", cases.CI_BEFORE, cases.CI_AFTER),
    (".github/CODEOWNERS", cases.CODEOWNERS_BEFORE, cases.CODEOWNERS_AFTER),
    ("README.md", cases.README_BEFORE, cases.README_AFTER),
])
def test_decoys_naming_a_ported_kernel_are_not_flagged(tmp_path, path, before, after):
    verdict = _one_commit(tmp_path, path, before, after, seed000.STALE_TREE)
    assert verdict.verdict == NOT_APPLICABLE and verdict.justification in ("no-row", "non-code")


def test_upstream_test_file_owned_by_a_row_is_non_code(tmp_path):
    matrix = MATRIX.replace('"vllm/_custom_ops.py"]', '"vllm/_custom_ops.py", "tests/kernels/test_cache.py"]')
    verdict = _one_commit(tmp_path, "tests/kernels/test_cache.py", cases.UPSTREAM_TEST_BEFORE, cases.UPSTREAM_TEST_AFTER,
                          seed000.STALE_TREE, matrix=matrix)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "non-code")


def test_revert_and_byte_identical_reland_in_one_range(tmp_path):
    verdicts, shas = classify_history(
        tmp_path,
        [CommitSpec("base", files={cases.SPARSE_PATH: cases.SPARSE_BEFORE}),
         CommitSpec("Use int64 row offsets", files={cases.SPARSE_PATH: cases.SPARSE_BODY_FIX}),
         CommitSpec('Revert "Use int64 row offsets"', files={cases.SPARSE_PATH: cases.SPARSE_BEFORE}),
         CommitSpec("Use int64 row offsets (re-land)", files={cases.SPARSE_PATH: cases.SPARSE_BODY_FIX})],
        cases.SPARSE_TREE,
    )
    assert (verdicts[1].verdict, verdicts[1].justification) == (NOT_APPLICABLE, "net-zero")
    assert (verdicts[2].verdict, verdicts[2].justification) == (NOT_APPLICABLE, "net-zero")
    assert shas[2] in verdicts[1].evidence[0].message
    assert verdicts[3].verdict == NEEDS_REVIEW


def test_rename_of_the_upstream_file_keeps_matching_the_ported_symbol(tmp_path):
    new_path = "csrc/libtorch_stable/cache_kernels.cu"
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={UPSTREAM_CU: seed000.BASE}),
         CommitSpec("Move cache kernels to libtorch_stable", renames={UPSTREAM_CU: new_path}),
         CommitSpec(seed000.TITLE, files={new_path: seed000.AFTER})],
        seed000.STALE_TREE,
    )
    assert verdicts[1].verdict == IN_SYNC and "update the anchors" in verdicts[1].reason
    assert verdicts[2].verdict == REAL_GAP


def test_one_commit_is_real_gap_for_one_row_and_not_applicable_for_another(tmp_path):
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={cases.OPS_PATH: cases.OPS_BEFORE, cases.SPARSE_PATH: cases.SPARSE_HELPER_BEFORE}),
         CommitSpec("Add seq_starts; check row bounds",
                    files={cases.OPS_PATH: cases.OPS_AFTER, cases.SPARSE_PATH: cases.SPARSE_HELPER_AFTER})],
        {**cases.nvfp4_tree(False), **cases.SPARSE_TREE},
    )
    verdict = verdicts[1]
    assert verdict.verdict == REAL_GAP
    by_row = {s.row: (s.verdict, s.justification) for s in verdict.symbols}
    assert by_row["KERNEL-KV-CACHE"] == (REAL_GAP, None)
    assert by_row["KERNEL-ATTN-MLA-SPARSE"] == (NOT_APPLICABLE, "not-ported")


# --- provenance, and a ported file the matrix forgot -------------------------------------------


def _pinned(tree: dict[str, str], pin: str) -> dict[str, str]:
    port = tree["kernels/kv_cache/gather.py"].replace(
        "::gather_and_maybe_dequant_cache\ndef", f"::gather_and_maybe_dequant_cache @{pin}\ndef").replace(
        "::vllm::gather_and_maybe_dequant_cache\n@", f"::vllm::gather_and_maybe_dequant_cache @{pin}\n@")
    return {**tree, "kernels/kv_cache/gather.py": port}


def test_pin_that_contains_the_commit_is_in_sync_by_provenance(tmp_path):
    commits = [CommitSpec("base", files={UPSTREAM_CU: seed000.BASE}), CommitSpec(seed000.TITLE, files={UPSTREAM_CU: seed000.AFTER})]
    from tests.portq.fixtures import build_repository
    shas = build_repository(tmp_path / "probe", commits)
    verdicts, _ = classify_history(tmp_path, commits, _pinned(seed000.STALE_TREE, shas[1][:12]))
    assert (verdicts[1].verdict, verdicts[1].decided_by) == (IN_SYNC, "provenance")


def test_pin_older_than_the_commit_is_evidence_not_a_verdict(tmp_path):
    commits = [CommitSpec("base", files={UPSTREAM_CU: seed000.BASE}), CommitSpec(seed000.TITLE, files={UPSTREAM_CU: seed000.AFTER})]
    from tests.portq.fixtures import build_repository
    shas = build_repository(tmp_path / "probe", commits)
    verdicts, _ = classify_history(tmp_path, commits, _pinned(seed000.STALE_TREE, shas[0][:12]))
    assert verdicts[1].verdict == REAL_GAP
    assert any(e.kind == "pin" and "does not contain" in e.message for e in verdicts[1].evidence)


def test_ported_file_no_row_owns_is_still_classified(tmp_path):
    matrix = MATRIX.replace('"vllm/v1/attention/backends/mla/*.py", ', "")
    verdict = _one_commit(tmp_path, cases.SPARSE_PATH, cases.SPARSE_BEFORE, cases.SPARSE_BODY_FIX, cases.SPARSE_TREE,
                          matrix=matrix)
    assert verdict.verdict in FLAGGED


# --- a new struct filled through a C++ out-parameter the Triton port returns ----------------


def test_new_struct_used_only_by_ported_definitions_of_the_same_commit_is_not_flagged(tmp_path):
    verdict = _one_commit(tmp_path, UPSTREAM_CU, cases.PAGE_TASK_BEFORE, cases.PAGE_TASK_AFTER, cases.page_task_tree(True))
    struct = _symbol(verdict, "vllm::PageTask")
    assert (struct.verdict, struct.justification) == (NOT_APPLICABLE, "not-ported")
    assert "vllm::map_page_task" in struct.reason


def test_out_parameter_whose_fields_the_port_returns_is_not_missing(tmp_path):
    verdict = _one_commit(tmp_path, UPSTREAM_CU, cases.PAGE_TASK_BEFORE, cases.PAGE_TASK_AFTER, cases.page_task_tree(True))
    assert verdict.verdict == IN_SYNC
    mapped = _symbol(verdict, "vllm::map_page_task")
    assert any(e.kind == "out-param" and "req_id, page_begin" in e.message for e in mapped.evidence)


def test_out_parameter_field_the_port_does_not_return_is_missing(tmp_path):
    verdict = _one_commit(tmp_path, UPSTREAM_CU, cases.PAGE_TASK_BEFORE, cases.PAGE_TASK_AFTER, cases.page_task_tree(False))
    assert verdict.verdict == NEEDS_REVIEW
    assert "lacks out" in _symbol(verdict, "vllm::map_page_task").reason


def test_out_parameter_declared_not_carried_is_not_missing(tmp_path):
    tree = cases.page_task_tree(False)
    port = tree["kernels/kv_cache/page_task.py"]
    tree["kernels/kv_cache/page_task.py"] = port.replace(
        "# portq: ports vllm:csrc/cache_kernels.cu::map_page_task\n",
        "# portq: ports vllm:csrc/cache_kernels.cu::map_page_task\n"
        "# portq: not-carried vllm:csrc/cache_kernels.cu::map_page_task[out] -- returned as a tuple\n")
    verdict = _one_commit(tmp_path, UPSTREAM_CU, cases.PAGE_TASK_BEFORE, cases.PAGE_TASK_AFTER, tree)
    assert verdict.verdict == IN_SYNC
    assert "declares out not carried" in _symbol(verdict, "vllm::map_page_task").reason


# --- a renamed kernel parameter the port passes positionally after a splat -----------


def test_renamed_parameter_the_port_passes_after_a_stride_splat_is_no_gap(tmp_path):
    verdict = _one_commit(tmp_path, cases.SPLAT_HOST, cases.SPLAT_BEFORE, cases.SPLAT_RENAMED, cases.splat_tree(),
                          message="rename SEQ_LEN to T")
    assert verdict.verdict != REAL_GAP
    host = _symbol(verdict, "scale_rows")
    messages = [e.message for e in host.evidence]
    assert not any("lacks t" in m or "does not" in m and " t " in m for m in messages), messages
    # The host's keyword follows the kernel's parameter renamed in its own place (``renamed-binding``,
    # the keyword read as the callee's normalised parameter), or the splat-aware parameter comparison
    # pairs the rename: either way the rename is named and nothing is flagged.
    assert "renamed the parameter seq_len to t" in host.reason or (
        "renamed-binding" in host.rules and "SEQ_LEN= → T=" in host.reason), host.reason


def test_new_caller_input_the_port_launch_lacks_after_a_splat_is_real_gap(tmp_path):
    verdict = _one_commit(tmp_path, cases.SPLAT_HOST, cases.SPLAT_BEFORE, cases.SPLAT_NEW_INPUT, cases.splat_tree(),
                          message="scale the rows by a tensor")
    assert verdict.verdict == REAL_GAP
    host = _symbol(verdict, "scale_rows")
    assert any("the port's launch lacks scale" in e.message for e in host.evidence), [e.message for e in host.evidence]


def test_port_launch_past_a_keyword_splat_is_unresolved_not_lacking(tmp_path):
    tree = cases.splat_tree()
    port = tree["kernels/mla_prefix/rows.py"]
    tree["kernels/mla_prefix/rows.py"] = port.replace(
        "def double_rows(x, out):", "def double_rows(x, out, **options):").replace(
        "rows, WIDTH=x.shape[1])", "rows, **options)")
    verdict = _one_commit(tmp_path, cases.SPLAT_HOST, cases.SPLAT_BEFORE, cases.SPLAT_NEW_INPUT, tree,
                          message="scale the rows by a tensor")
    host = _symbol(verdict, "scale_rows")
    messages = [e.message for e in host.evidence]
    assert not any("launch lacks scale" in m for m in messages), messages
    assert any("the port's launch binds through *x.stride(), **options" in m for m in messages), messages
