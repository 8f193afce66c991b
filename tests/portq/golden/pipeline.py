"""Run the classifier end to end on a GitPython fixture: an upstream history
built with ``tests.portq.fixtures``, an in-tree directory of files, a matrix.

``classify_history`` runs the real ``portq scan --json`` (in process, with
``--upstream/--tree/--matrix/--ledger`` flags) and reads each entry's full
verdict back from the ledger it wrote. ``classify_in_process`` runs the same
stages without the ledger, for quick experiments.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from portq.classifier.classify import ClassifierContext, build_classifier
from portq.classifier.mapping import ChangeMapper
from portq.cli import main
from portq.language.symbols import SymbolTableCache
from portq.ledger.store import open_ledger
from portq.tree.matrix import Matrix
from portq.upstream.history import Upstream
from tests.portq.fixtures import CommitSpec, build_repository

MATRIX = """\
[[row]]
id       = "KERNEL-KV-CACHE"
title    = "Paged KV-cache write and gather kernels"
upstream = "vllm"
paths    = ["csrc/cache_kernels.cu", "csrc/libtorch_stable/cache_kernels.cu", "vllm/_custom_ops.py"]
exclude  = ["csrc/**/test_*"]
symbols  = ["gather_and_maybe_dequant_cache", "cp_gather_cache", "cp_gather_and_upconvert_nvfp4_kv_cache"]
tree     = ["kernels/kv_cache/"]
tests    = ["tests/kernels/kv_cache/"]

[[row]]
id       = "KERNEL-ATTN-MLA-SPARSE"
title    = "Sparse-MLA index utilities and the MLA chunked-context prefill"
upstream = "vllm"
paths    = ["vllm/v1/attention/backends/mla/*.py", "vllm/model_executor/layers/attention/mla_attention.py"]
tree     = ["kernels/mla_sparse/", "kernels/mla_prefill/"]
tests    = ["tests/kernels/mla_sparse/"]

[[row]]
id       = "KERNEL-ATTN-MLA-PREFIX"
title    = "aiter gather_kv_b_proj"
upstream = "vllm"
paths    = ["aiter/ops/triton/gather_kv_b_proj.py", "aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py"]
tree     = ["kernels/mla_prefix/"]
tests    = ["tests/kernels/mla_prefix/"]
"""


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def classify_history(tmp_path: Path, commits: list[CommitSpec], tree: dict[str, str],
                     matrix: str = MATRIX, first: int = 1):
    """Verdicts (by entry number) of ``portq scan`` over the range
    ``commits[first-1]..last``, read back from the ledger the scan wrote;
    and the SHAs of the commits."""
    shas = build_repository(tmp_path / "upstream", commits)
    tree_root = write_tree(tmp_path / "tree", tree)
    (tmp_path / "matrix.toml").write_text(matrix)
    ledger_path = tmp_path / "ledger" / "ledger.sqlite"
    range_spec = f"{shas[first - 1][:12]}..{shas[-1][:12]}"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["scan", range_spec, "--json", "--upstream", f"vllm={tmp_path / 'upstream'}",
                     "--tree", str(tree_root), "--matrix", str(tmp_path / "matrix.toml"),
                     "--ledger", str(ledger_path)])
    assert code == 0, f"portq scan exited {code}"
    scanned = json.loads(printed.getvalue())
    with open_ledger(ledger_path, create=False) as ledger:
        wave = ledger.latest_wave(range_spec)
        verdicts = {record.position: record.scan.to_verdict() for record in ledger.wave_entries(wave)}
    for entry in scanned["entries"]:  # the JSON the user sees agrees with the ledger
        assert entry["verdict"] == verdicts[entry["entry"]].verdict
    return verdicts, shas


def classify_commit(tmp_path: Path, before: dict[str, str], after: dict[str, str], tree: dict[str, str],
                    matrix: str = MATRIX, message: str = "change"):
    """The verdict of one upstream commit (titled ``message``) that writes the files ``after`` over
    a base holding ``before``: ``classify_history`` over ``base..commit``, its one entry."""
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=before), CommitSpec(message, files=after)],
                                   tree, matrix)
    return verdicts[1]


def classify_in_process(tmp_path: Path, commits: list[CommitSpec], tree: dict[str, str],
                        matrix: str = MATRIX, first: int = 1):
    """The same stages without the ledger (history → mapping → classifier)."""
    shas = build_repository(tmp_path / "upstream", commits)
    tree_root = write_tree(tmp_path / "tree", tree)
    matrix_model = Matrix.parse(matrix)
    tables = SymbolTableCache()
    with Upstream(tmp_path / "upstream", "vllm") as upstream:
        revisions = upstream.resolve_range(f"{shas[first - 1]}..{shas[-1]}")
        mapper = ChangeMapper(matrix_model, "vllm", upstream.read_blob, tables)
        entries = [mapper.map_commit(i, c) for i, c in enumerate(upstream.commits(revisions), 1)]
        context = ClassifierContext(
            upstream="vllm", matrix=matrix_model, tree_root=tree_root, read_blob=upstream.read_blob,
            is_ancestor=upstream.is_ancestor, symbol_tables=tables, cache_dir=tmp_path / "cache",
        )
        classifier = build_classifier(context)
        return {entry.position: verdict for entry, verdict in classifier.classify_range(entries)}, shas
