"""portq init: anchors, base and rows proposed for a port that records no provenance."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from portq.tree.definition_match import name_similarity, normalised_name
from portq.tree.sidecar import read_sidecar

KERNEL_V1 = '''\
import triton
import triton.language as tl


@triton.jit
def _scale_rows_kernel(x_ptr, out_ptr, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    values = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, values * scale, mask=mask)


def scale_rows(x, scale):
    out = torch.empty_like(x)
    _scale_rows_kernel[(x.shape[0],)](x, out, x.shape[1], scale, BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
'''

KERNEL_V2 = KERNEL_V1.replace("values * scale", "(values * scale).to(out_ptr.dtype.element_ty)")
KERNEL_V3 = KERNEL_V2.replace("row = tl.program_id(0)", "row = tl.program_id(0).to(tl.int64)")

UNRELATED = "def parse_config(path):\n    with open(path) as handle:\n        return handle.read().split()\n"


def _git(cwd: Path, *arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
                               "GIT_COMMITTER_EMAIL": "a@b", "GIT_AUTHOR_DATE": "2025-01-01T00:00:00",
                               "GIT_COMMITTER_DATE": "2025-01-01T00:00:00", "PATH": "/usr/bin:/bin"}).stdout.strip()


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, list[str]]:
    """kernlib: the kernel file at three versions, renamed between the second and the third."""
    clone = tmp_path / "kernlib"
    (clone / "kernlib" / "ops").mkdir(parents=True)
    _git(clone, "init", "-q", "-b", "main")
    shas = []
    (clone / "kernlib" / "config.py").write_text(UNRELATED)
    for text, path in ((KERNEL_V1, "kernlib/scale.py"), (KERNEL_V2, "kernlib/scale.py"),
                       (KERNEL_V3, "kernlib/ops/scale_rows.py")):
        if path == "kernlib/ops/scale_rows.py":
            _git(clone, "mv", "kernlib/scale.py", path)
        (clone / path).write_text(text)
        _git(clone, "add", "-A")
        _git(clone, "commit", "-q", "-m", f"version {len(shas) + 1}")
        shas.append(_git(clone, "rev-parse", "HEAD"))
    return clone, shas


def _tree(tmp_path: Path, text: str) -> Path:
    """An engine that vendors the kernel under its own file name, with one function of its own."""
    tree = tmp_path / "engine"
    (tree / "third_party").mkdir(parents=True)
    (tree / "third_party" / "row_scale.py").write_text("# Adapted from kernlib\n" + text)
    (tree / "serve.py").write_text("def handle_request(x):\n    return x\n")
    return tree


def _init(cwd: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "portq.cli", "init", *arguments], cwd=cwd,
                          capture_output=True, text=True)


def test_names_match_after_normalisation():
    assert normalised_name("token_to_seq_p") == normalised_name("token_to_seq")
    assert normalised_name("_rms_norm_kernel") == normalised_name("RmsNorm") == "rmsnorm"
    assert name_similarity("scale_rows", "scale_rows") == 1.0
    assert name_similarity("__init__", "__init__") == 0.0  # a special method's name says nothing


def test_init_proposes_anchors_at_the_base_and_writes_a_configuration(tmp_path, upstream):
    clone, shas = upstream
    tree = _tree(tmp_path, KERNEL_V2)
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    proposed = {(p["definition"], p["upstream_path"], p["upstream_symbol"]) for p in found["proposals"]}
    # the base is the second version, where the file still had its old name
    assert proposed == {("_scale_rows_kernel", "kernlib/scale.py", "_scale_rows_kernel"),
                        ("scale_rows", "kernlib/scale.py", "scale_rows")}
    assert found["base"]["commit"] == shas[1] and found["base"]["undetermined"] is False
    assert [u["definition"] for u in found["unmatched"]] == ["handle_request"]
    sidecar, _ = read_sidecar(tmp_path / "portq-anchors.toml")
    assert {(e.tree, e.reference, e.pin) for e in sidecar.entries} == {
        ("third_party/row_scale.py::_scale_rows_kernel", "kernlib:kernlib/scale.py::_scale_rows_kernel", shas[1][:10]),
        ("third_party/row_scale.py::scale_rows", "kernlib:kernlib/scale.py::scale_rows", shas[1][:10]),
    }
    matrix = (tmp_path / "matrix" / "kernel-matrix.toml").read_text()
    assert '"kernlib/scale.py"' in matrix and '"third_party/row_scale.py"' in matrix
    assert 'anchors = "portq-anchors.toml"' in (tmp_path / "portq.toml").read_text()
    # the generated configuration is one portq matrix reads without problems about anchors
    listed = subprocess.run([sys.executable, "-m", "portq.cli", "matrix", "--json"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    kinds = {p["kind"] for p in json.loads(listed.stdout)["problems"]}
    assert not kinds & {"sidecar-unresolved", "anchor-without-definition", "anchor-unowned"}
    # nothing is written over without --force
    again = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine")
    assert again.returncode == 0 and "nothing missing" in again.stdout


def test_a_configured_tree_gets_only_what_is_missing_as_a_diff(tmp_path, upstream):
    clone, _ = upstream
    tree = _tree(tmp_path, KERNEL_V2)
    assert _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine").returncode == 0
    (tree / "third_party" / "more.py").write_text(KERNEL_V3.replace("scale_rows", "scale_rows_again"))
    before = (tmp_path / "portq-anchors.toml").read_text()
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine")
    assert result.returncode == 0, result.stderr
    assert "+tree  = \"third_party/more.py::scale_rows_again\"" in result.stdout
    assert "third_party/row_scale.py" not in "".join(l for l in result.stdout.splitlines() if l.startswith("+"))
    assert (tmp_path / "portq-anchors.toml").read_text() == before  # a diff only, until --force
    assert _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--force").returncode == 0
    assert "more.py::scale_rows_again" in (tmp_path / "portq-anchors.toml").read_text()


def test_dry_run_writes_nothing_and_existing_files_need_force(tmp_path, upstream):
    clone, _ = upstream
    _tree(tmp_path, KERNEL_V1)
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--dry-run")
    assert result.returncode == 0 and "not written: --dry-run" in result.stdout
    assert not (tmp_path / "portq.toml").exists() and not (tmp_path / "portq-anchors.toml").exists()
    (tmp_path / "portq-anchors.toml").write_text("# mine\n")
    blocked = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine")
    assert blocked.returncode == 2 and "pass --force" in blocked.stderr
    assert (tmp_path / "portq-anchors.toml").read_text() == "# mine\n"


def test_write_comments_puts_the_anchors_in_the_sources(tmp_path, upstream):
    clone, shas = upstream
    tree = _tree(tmp_path, KERNEL_V1)
    assert _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--write-comments").returncode == 0
    text = (tree / "third_party" / "row_scale.py").read_text()
    assert f"# portq: ports kernlib:kernlib/scale.py::_scale_rows_kernel @{shas[0][:10]}\n@triton.jit" in text
    assert "anchors =" not in (tmp_path / "portq.toml").read_text()


@pytest.mark.parametrize("make, expected", [
    (lambda tmp, clone: ["--tree", "engine"], "--upstream NAME=PATH: expected the upstream clone"),
    (lambda tmp, clone: ["--upstream", f"kernlib={tmp / 'engine'}", "--tree", "engine"], "is not a git repository"),
    (lambda tmp, clone: ["--upstream", f"kernlib={clone}", "--tree", "engine", str(tmp.parent)], "is outside the tree"),
    (lambda tmp, clone: ["--upstream", f"kernlib={clone}", "--tree", "engine", "nowhere"], "does not exist in the tree"),
    (lambda tmp, clone: ["--upstream", f"kernlib={clone}", "--tree", "engine", "empty.py"],
     "no function, method or kernel definitions"),
    (lambda tmp, clone: ["--upstream", f"kernlib={clone}", "--tree", "engine", "serve.py"], "resembles"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, upstream, make, expected):
    clone, _ = upstream
    tree = _tree(tmp_path, KERNEL_V1)
    (tree / "empty.py").write_text("VALUE = 1\n")
    result = subprocess.run([sys.executable, "-m", "portq.cli", "init", *make(tmp_path, clone)], cwd=tree.parent,
                            capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and expected in result.stderr
    assert not (tmp_path / "portq.toml").exists()


def test_a_renamed_kernel_and_its_wrapper_are_matched_by_structure(tmp_path, upstream):
    clone, shas = upstream
    renamed = (KERNEL_V2.replace("_scale_rows_kernel", "_rows_times_kernel").replace("scale_rows", "rows_times")
               .replace("x_ptr", "src").replace("out_ptr", "dst").replace("values", "v").replace("BLOCK", "TILE"))
    tree = tmp_path / "engine"
    tree.mkdir()
    (tree / "ops.py").write_text(renamed + "\n\ndef handle_request(x):\n    return x\n")
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    proposed = {p["definition"]: (p["upstream_symbol"], p["by"]) for p in found["proposals"]}
    assert proposed["_rows_times_kernel"][0] == "_scale_rows_kernel"
    assert proposed["rows_times"][0] == "scale_rows"
    assert "handle_request" not in proposed  # the engine's own function is not forced onto a guess


def test_the_base_search_parses_each_upstream_blob_once_across_commits_and_passes(tmp_path, upstream, monkeypatch):
    """A blob several commits hold (or both passes read) is parsed once; the base is unchanged."""
    from portq.tree import provenance
    from portq.upstream.history import Upstream

    clone, shas = upstream
    tree = _tree(tmp_path, KERNEL_V2)
    parsed: list[tuple[str, str, bytes]] = []

    def counting(name: str):
        real = getattr(provenance, name)

        def counted(source: bytes, path: str):
            parsed.append((name, path, source))
            return real(source, path)
        return counted

    for name in ("definitions_of", "definition_texts"):  # matching's parse, the base search's
        monkeypatch.setattr(provenance, name, counting(name))
    with Upstream(clone, "kernlib") as opened:
        found = provenance.survey(opened, opened.resolve("HEAD"), tree,
                                  ["third_party/row_scale.py", "serve.py"])
    assert found.base.commit == shas[1]
    upstream_parses = [item for item in parsed if item[1].startswith("kernlib/")]
    assert upstream_parses and len(upstream_parses) == len(set(upstream_parses))


def test_an_unmatched_definition_reports_its_nearest_candidate_below_the_threshold(tmp_path, upstream):
    """A definition left unmatched is never proposed, but --json says how near its best candidate came."""
    from portq.tree.definition_match import CONFIDENCE_THRESHOLD

    clone, _ = upstream
    tree = tmp_path / "engine"
    tree.mkdir()
    # an engine function that reads a file like upstream's config reader does, but is not a port of it
    (tree / "ops.py").write_text(KERNEL_V2 + "\n\ndef load_settings(name):\n    with open(name) as f:\n"
                                 "        return f.read().splitlines()\n")
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--json", "--dry-run")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert "load_settings" not in {p["definition"] for p in found["proposals"]}
    [entry] = [u for u in found["unmatched"] if u["definition"] == "load_settings"]
    assert entry["nearest"]["upstream_symbol"] == "parse_config"
    assert 0 < entry["nearest"]["confidence"] < CONFIDENCE_THRESHOLD


def test_a_pass_is_weighed_by_the_port_definitions_it_matches_each_once():
    """A definition matched in two upstream files (a copy upstream keeps elsewhere) counts once:
    the pass that matches more of the port wins over one that matches fewer twice."""
    from portq.tree.definition_match import Definition, Match
    from portq.tree.provenance import matched_weight

    def definition(file: str, name: str) -> Definition:
        return Definition(file, name, name, "function", "python", 1, 2, f"def {name}(): pass")

    ports = [definition("port.py", name) for name in ("a", "b", "c")]
    here, copy = "lib/ops.py", "lib/legacy/ops.py"
    doubled = [Match(ports[0], definition(here, "a"), 1.0, "name"), Match(ports[0], definition(copy, "a"), 1.0, "name"),
               Match(ports[1], definition(here, "b"), 1.0, "name"), Match(ports[1], definition(copy, "b"), 1.0, "name")]
    wider = [Match(port, definition(here, port.name), 0.9, "name") for port in ports]
    assert matched_weight(doubled) == 2.0
    assert matched_weight(wider) > matched_weight(doubled)


def test_the_base_of_a_port_that_dropped_a_feature_is_the_version_it_was_taken_from(tmp_path):
    """Upstream adds a cast (v2) together with a large optional feature, then more (v3); the port
    keeps the cast and drops the feature. The base is v2: the first version that holds all the
    port keeps, although v1, without the feature, is closer in size."""
    from portq.tree import provenance
    from portq.upstream.history import Upstream

    feature = ("    if residual is not None:\n"
               + "".join(f"        r{i} = tl.load(residual + row * n_cols + cols + {i}, mask=mask)\n"
                         f"        values = values + r{i} * {i + 1}.0\n" for i in range(6)))
    v1 = KERNEL_V1.replace("n_cols, scale, BLOCK", "n_cols, scale, residual, BLOCK")
    v2 = v1.replace("row = tl.program_id(0)", "row = tl.program_id(0).to(tl.int64)").replace(
        "    tl.store(", feature + "    tl.store(")
    v3 = v2.replace("values * scale", "(values * scale).to(out_ptr.dtype.element_ty)")
    clone = tmp_path / "kernlib"
    clone.mkdir()
    _git(clone, "init", "-q", "-b", "main")
    (clone / "config.py").write_text(UNRELATED)
    shas = []
    for text in (v1, v2, v3):
        (clone / "scale.py").write_text(text)
        _git(clone, "add", "-A")
        _git(clone, "commit", "-q", "-m", f"version {len(shas) + 1}")
        shas.append(_git(clone, "rev-parse", "HEAD"))
    tree = tmp_path / "engine"
    tree.mkdir()
    (tree / "scale.py").write_text(v2.replace(feature, ""))
    with Upstream(clone, "kernlib") as opened:
        found = provenance.survey(opened, opened.resolve("HEAD"), tree, ["scale.py"])
    assert found.base.commit == shas[1]


NORM_BODY = '''(x, weight, eps=1e-6):
    rows, cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    units = min(rows, torch.cuda.get_device_properties(x.device).multi_processor_count)
    _norm_rows_kernel[(units,)](x, out, weight, x.stride(0), rows, cols, eps, BLOCK=block)
    return out
'''


def test_the_base_search_finds_a_definition_under_its_older_spelling(tmp_path):
    """Upstream renamed ``rms_norm`` to ``rmsnorm_fwd`` after the port (``rmsnorm``) was taken:
    the base is the version before the rename, and the anchor names the definition as it was there."""
    from portq.tree import provenance
    from portq.upstream.history import Upstream

    clone = tmp_path / "kernlib"
    clone.mkdir()
    _git(clone, "init", "-q", "-b", "main")
    (clone / "config.py").write_text(UNRELATED)
    shas = []
    for text in ("def rms_norm" + NORM_BODY,
                 "def rmsnorm_fwd" + NORM_BODY.replace("return out", "return out.contiguous()")):
        (clone / "norm.py").write_text(text)
        _git(clone, "add", "-A")
        _git(clone, "commit", "-q", "-m", f"version {len(shas) + 1}")
        shas.append(_git(clone, "rev-parse", "HEAD"))
    tree = tmp_path / "engine"
    tree.mkdir()
    (tree / "norm.py").write_text("def rmsnorm" + NORM_BODY)
    with Upstream(clone, "kernlib") as opened:
        found = provenance.survey(opened, opened.resolve("HEAD"), tree, ["norm.py"])
    assert found.base.commit == shas[0]
    assert [(p.port.name, p.symbol, p.pin) for p in found.proposals] == [("rmsnorm", "rms_norm", shas[0])]


@pytest.mark.parametrize("helper_file, kept", [("lib/quant.py", False), ("lib/norm.py", True)])
def test_a_look_alike_in_a_file_the_rest_of_the_port_file_does_not_draw_from_is_not_proposed(helper_file, kept):
    """A helper matched by structure alone, in an upstream file where none of its port file's other
    matched definitions are, loses confidence (here below the threshold); in the same file it stays."""
    from portq.tree.definition_match import CONFIDENCE_THRESHOLD, Definition, Match, _assign

    def definition(file: str, name: str) -> Definition:
        return Definition(file, name, name, "function", "python", 1, 2, f"def {name}(): pass")

    wrapper, helper = definition("ops/norm.py", "rmsnorm"), definition("ops/norm.py", "_units")
    scored = {0: [Match(wrapper, definition("lib/norm.py", "rms_norm"), 0.95, "normalised name", 0.8)],
              1: [Match(helper, definition(helper_file, "get_units"), CONFIDENCE_THRESHOLD + 0.05, "structure", 0.5)]}
    proposals, unmatched, guesses = _assign([wrapper, helper], scored)
    assert [m.port.name for m in proposals] == (["rmsnorm", "_units"] if kept else ["rmsnorm"])
    if not kept:
        assert unmatched == [helper] and guesses[0].confidence < CONFIDENCE_THRESHOLD


def test_a_call_graph_pairing_resting_only_on_a_look_alike_is_weaker():
    """A kernel launched by a wrapper matched by name pairs with the counterpart's kernel more
    confidently than one launched by a wrapper matched only by structure."""
    from portq.tree.definition_match import LOOK_ALIKE_NEIGHBOUR_PENALTY, Definition, Match, _call_graph_evidence

    def definition(file: str, name: str, called: frozenset = frozenset(), kind: str = "function") -> Definition:
        return Definition(file, name, name, kind, "python", 1, 2, f"def {name}(): pass", called=called)

    # the kernel's name shares no word with upstream's (a shared word adds ``CALLEE_WORDS_BONUS`` on a named path)
    wrapper = definition("ops.py", "scale", frozenset({"_tile_kernel"}))
    kernel = definition("ops.py", "_tile_kernel", kind="triton_kernel")
    theirs = definition("lib/scale.py", "scale_rows", frozenset({"_scale_rows_kernel"}))
    their_kernel = definition("lib/scale.py", "_scale_rows_kernel", kind="triton_kernel")
    pools = {0: [theirs, their_kernel], 1: [theirs, their_kernel]}
    found = {}
    for how in ("normalised name", "structure"):
        scored = {0: [Match(wrapper, theirs, 0.9, how)], 1: []}
        _call_graph_evidence([wrapper, kernel], pools, scored)
        [paired] = [m for m in scored[1] if m.upstream is their_kernel]
        found[how] = paired.confidence
    assert found["structure"] == pytest.approx(found["normalised name"] - LOOK_ALIKE_NEIGHBOUR_PENALTY)


def test_where_no_version_stands_out_the_base_is_the_oldest_near_the_best_with_todays_files():
    """Scores that barely move over the history (a port in another language) say nothing about
    the base: the oldest commit near the best whose files are where upstream has them at the
    newest is taken (a scan from there misses no change; the anchors name today's files) and
    marked undetermined; a clear peak is still the oldest commit of the best score."""
    from portq.tree.provenance import _best

    commits = [f"c{i}" for i in range(6)]  # oldest first
    where = [{"port.py::f": ("lib/ops.py", "f")} for _ in commits]
    scores = [0.23, 0.23, 0.22, 0.20, 0.22, 0.22]
    flat = _best("port.py", scores, commits, where)
    assert (flat.commit, flat.run_end, flat.undetermined) == ("c0", "c5", True)
    moved = [{"port.py::f": ("ops.py" if i < 3 else "lib/ops.py", "f")} for i in range(6)]
    assert _best("port.py", scores, commits, moved).commit == "c3"
    peak = _best("port.py", [0.10, 0.40, 0.40, 0.25, 0.20, 0.20], commits, where)
    assert (peak.commit, peak.run_end, peak.undetermined) == ("c1", "c2", False)
    copy = _best("port.py", [0.90, 0.97, 0.97, 0.95, 0.95, 0.95], commits, where)
    assert (copy.commit, copy.undetermined) == ("c1", False)


def test_a_method_matches_the_same_method_of_a_class_whose_name_holds_its_class_name():
    """``RMSNormOp.forward`` and ``LigerRMSNormFunction.forward``: the upstream prefixes its own
    name and says Function where the port says Op; ``forward`` of an unrelated class stays weak."""
    from portq.tree.definition_match import Definition, definition_name_similarity

    def method(owner: str, name: str) -> Definition:
        return Definition("x.py", name, f"{owner}.{name}", "method", "python", 1, 2, f"def {name}(): pass")

    port = method("RMSNormOp", "forward")
    assert definition_name_similarity(port, method("LigerRMSNormFunction", "forward")) >= 0.9
    assert definition_name_similarity(method("CrossEntropyOp", "backward"),
                                      method("LigerCrossEntropyFunction", "backward")) >= 0.9
    assert definition_name_similarity(port, method("LigerLayerNormFunction", "forward")) < 0.6
    assert definition_name_similarity(port, method("LigerFusedAddRMSNormFunction", "forward")) < 0.6
    assert definition_name_similarity(port, method("LigerRMSNormFunction", "backward")) < 0.6


def test_a_name_matches_the_same_words_in_order_with_a_word_or_two_more():
    """``fwd_hdim32`` is upstream's ``run_mha_fwd_hdim32`` and ``max_exp2_sum`` its
    ``max_scale_exp2_sum``; two plain words inside a longer name (``rms_norm`` in
    ``fused_add_rms_norm``) name a family, and words out of order or three more are another name."""
    from portq.tree.definition_match import WORD_RUN_SIMILARITY

    assert name_similarity("fwd_hdim32", "run_mha_fwd_hdim32") == WORD_RUN_SIMILARITY
    assert name_similarity("max_exp2_sum", "max_scale_exp2_sum") == WORD_RUN_SIMILARITY
    assert name_similarity("rope_cached_fwd_2c", "rope_cached_fwd") < WORD_RUN_SIMILARITY  # one word, not two
    assert name_similarity("rms_norm_fwd", "fused_add_rms_norm") < WORD_RUN_SIMILARITY
    assert name_similarity("mask_causal", "apply_mask_causal_w_idx") < WORD_RUN_SIMILARITY
    assert name_similarity("sum_exp2_max", "max_scale_exp2_sum") < WORD_RUN_SIMILARITY


LAUNCH_TEMPLATE = '''\
#pragma once
#include "attn_kernel.h"

template<typename T>
__global__ void attn_fwd_kernel(AttnParams params) {
    compute_attn<T>(params);
}

template<typename T>
void run_attn_fwd(AttnParams &params, cudaStream_t stream) {
    dim3 grid(params.num_blocks, params.batch, params.heads);
    auto kernel = &attn_fwd_kernel<T>;
    kernel<<<grid, 128, 0, stream>>>(params);
}

template<typename T>
void run_attn_hdim32(AttnParams &params, cudaStream_t stream) {
    run_attn_fwd<T>(params, stream);
}

template<typename T>
void run_attn_hdim64(AttnParams &params, cudaStream_t stream) {
    run_attn_fwd<T>(params, stream);
}
'''

TRITON_ATTENTION = '''\
import triton
import triton.language as tl


@triton.jit
def _tile_kernel(q, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, tl.load(q + offsets, mask=offsets < n), mask=offsets < n)


def launch(q, out, block):
    _tile_kernel[(triton.cdiv(q.numel(), block),)](q, out, q.numel(), BLOCK=block)
    return out


def attn_hdim32(q, out):
    return launch(q, out, 128)


def attn_hdim64(q, out):
    return launch(q, out, 64)
'''


def test_a_triton_port_of_cuda_launch_code_is_matched_by_name_words_and_launches(tmp_path):
    """A Triton re-implementation shares almost no identifier with the CUDA header it ports:
    the header is found because it names the port's ``attn_hdim32`` with a word more
    (``run_attn_hdim32``), those match by their name words, the launcher by the call graph and
    the kernel as the one kernel its launcher launches on both sides."""
    clone = tmp_path / "attnlib"
    (clone / "csrc").mkdir(parents=True)
    _git(clone, "init", "-q", "-b", "main")
    (clone / "csrc" / "attn_launch_template.h").write_text(LAUNCH_TEMPLATE)
    (clone / "csrc" / "config.py").write_text(UNRELATED)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "launch template")
    tree = tmp_path / "engine"
    tree.mkdir()
    (tree / "attention.py").write_text(TRITON_ATTENTION)
    result = _init(tmp_path, "--upstream", f"attnlib={clone}", "--tree", "engine", "--json", "--dry-run")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[0])
    proposed = {p["definition"]: (p["upstream_path"], p["upstream_symbol"], p["by"]) for p in found["proposals"]}
    assert proposed["attn_hdim32"] == ("csrc/attn_launch_template.h", "run_attn_hdim32", "name words")
    assert proposed["attn_hdim64"][1] == "run_attn_hdim64"
    assert proposed["launch"][1:] == ("run_attn_fwd", "call graph")
    assert proposed["_tile_kernel"][1:] == ("attn_fwd_kernel", "call graph")


def test_a_port_of_a_compiled_function_is_anchored_to_its_python_declaration_too(tmp_path):
    """Upstream defines ``scale_and_add`` in C++ and declares it in Python for its binding; the
    declaration names nothing else the port uses, yet a Triton port of the op is anchored to both."""
    clone = tmp_path / "oplib"
    (clone / "csrc").mkdir(parents=True)
    (clone / "oplib").mkdir()
    _git(clone, "init", "-q", "-b", "main")
    (clone / "csrc" / "scale_kernels.cu").write_text(
        "__global__ void scale_and_add_kernel(float* out, const float* input, float scale, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] += input[i] * scale;\n}\n\n"
        "void scale_and_add(torch::Tensor& out, torch::Tensor& input, double scale) {\n"
        "    int n = input.numel();\n"
        "    scale_and_add_kernel<<<(n + 255) / 256, 256>>>(out.data_ptr<float>(), input.data_ptr<float>(), scale, n);\n"
        "}\n")
    (clone / "oplib" / "scaling.py").write_text(
        "from .jit import compile_ops\n\n\n@compile_ops(\"module_scale\")\n"
        "def scale_and_add(out, input, scale): ...\n")
    for index in range(3):  # files that call it, ranked above the declaration by what they share with the port
        (clone / "oplib" / f"user{index}.py").write_text(
            "def apply(out, input, scale, n, BLOCK, mask, offsets):\n    return scale_and_add(out, input, scale)\n")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "scale op")
    tree = tmp_path / "engine"
    tree.mkdir()
    (tree / "scaling.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def _scale_and_add_kernel(out, input, scale, n, BLOCK: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n\n"
        "    x = tl.load(out + offsets, mask=mask) + tl.load(input + offsets, mask=mask) * scale\n"
        "    tl.store(out + offsets, x, mask=mask)\n\n\n"
        "def scale_and_add(out, input, scale):\n    n = input.numel()\n"
        "    _scale_and_add_kernel[(triton.cdiv(n, 256),)](out, input, scale, n, BLOCK=256)\n")
    result = _init(tmp_path, "--upstream", f"oplib={clone}", "--tree", "engine", "--json", "--dry-run")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[0])
    anchored = {(p["upstream_path"], p["upstream_symbol"]) for p in found["proposals"] if p["definition"] == "scale_and_add"}
    assert anchored == {("csrc/scale_kernels.cu", "scale_and_add"), ("oplib/scaling.py", "scale_and_add")}


GATED_KERNELS_CU = '''\
template <typename T, T (*ACT_FN)(const T&)>
__global__ void act_and_mul_kernel(T* __restrict__ out, const T* __restrict__ input, const int d) {
    const int64_t token = blockIdx.x;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
        out[token * d + i] = ACT_FN(input[token * 2 * d + i]) * input[token * 2 * d + d + i];
    }
}

template <typename T>
__device__ __forceinline__ T silu_kernel(const T& x) {
    return x / (1.0f + expf(-x));
}

#define GATE_GRID                                      \\
    int d = input.size(-1) / 2;                        \\
    dim3 grid(input.numel() / input.size(-1));         \\
    dim3 block(std::min(d, 1024));

#define LAUNCH_GATE_KERNEL(KERNEL)                                     \\
    GATE_GRID                                                          \\
    act_and_mul_kernel<float, KERNEL<float>><<<grid, block>>>(         \\
        out.data_ptr<float>(), input.data_ptr<float>(), d);

void silu_and_mul(torch::Tensor& out, torch::Tensor& input) {
    LAUNCH_GATE_KERNEL(silu_kernel);
}
'''

GATED_TRITON = '''\
import triton
import triton.language as tl


@triton.jit
def _silu(x):
    return x / (1.0 + tl.exp(-x))


@triton.jit
def _gated_rows(out, inp, d, CHUNK: tl.constexpr):
    token = tl.program_id(0)
    for start in range(0, d, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        keep = cols < d
        gate = tl.load(inp + token * 2 * d + cols, mask=keep).to(tl.float32)
        up = tl.load(inp + token * 2 * d + d + cols, mask=keep)
        tl.store(out + token * d + cols, _silu(gate) * up, mask=keep)


def silu_and_mul(out, input):
    d = input.shape[-1] // 2
    _gated_rows[(input.numel() // input.shape[-1],)](out, input, d, CHUNK=1024)
'''


def test_a_launch_through_a_macro_is_read_from_the_macro_body():
    """Upstream launches its gated kernel inside a macro that the binding expands: the kernel the
    macro's body launches (through a second macro) is a callee of the binding, so the Triton kernel
    the port's binding launches pairs with it through the call graph."""
    from portq.tree.definition_match import definitions_of, match_definitions

    upstream = definitions_of(GATED_KERNELS_CU.encode(), "csrc/activation_kernels.cu")
    binding = next(d for d in upstream if d.name == "silu_and_mul")
    assert {"act_and_mul_kernel", "GATE_GRID", "grid"} <= binding.called
    assert "LAUNCH_GATE_KERNEL" not in next(d for d in upstream if d.name == "act_and_mul_kernel").called
    port = definitions_of(GATED_TRITON.encode(), "gated.py")
    proposals, _, _ = match_definitions(port, {"csrc/activation_kernels.cu": upstream},
                                        {"gated.py": ["csrc/activation_kernels.cu"]})
    found = {m.port.name: (m.upstream.name, m.how) for m in proposals}
    assert found["silu_and_mul"] == ("silu_and_mul", "name")
    assert found["_gated_rows"] == ("act_and_mul_kernel", "call graph")


INLINED_CU = '''\
template <typename T>
__device__ inline void reduce_max(const T* tile, T* out, int n) {
    for (int i = 0; i < n; ++i) { out[0] = max(out[0], tile[i]); }
}

template <typename T>
__device__ inline void reduce_sum(const T* tile, T* out, int n) {
    for (int i = 0; i < n; ++i) { out[0] += tile[i]; }
}

template <typename T>
__device__ inline void apply_mask(T* tile, int cols, int limit) {
    for (int j = 0; j < cols; ++j) { if (j >= limit) tile[j] = -INFINITY; }
}

template <typename T>
__device__ inline void apply_mask_causal(T* tile, int row, int cols, int limit) {
    for (int j = 0; j < cols; ++j) { if (j >= min(limit, row + 1)) tile[j] = -INFINITY; }
}

template <typename T>
__device__ inline void apply_bias(T* tile, const T* bias, int cols) {
    for (int j = 0; j < cols; ++j) { tile[j] += bias[j]; }
}

template <typename T>
__device__ inline void apply_scale(T* tile, float scale, int cols) {
    for (int j = 0; j < cols; ++j) { tile[j] *= scale; }
}

template <typename T>
__device__ inline void rescale_rows(T* tile, T* row_max, T* row_sum, int cols) {
    reduce_max(tile, row_max, cols);
    reduce_sum(tile, row_sum, cols);
}

template <typename T>
__device__ inline void compute_block(const Params& params, int block) {
    T tile[128];
    T row_max[1], row_sum[1];
    apply_bias(tile, params.bias, params.cols);
    apply_scale(tile, params.scale, params.cols);
    if (params.causal) { apply_mask_causal(tile, block, params.cols, params.seqlen_k); }
    else { apply_mask(tile, params.cols, params.seqlen_k); }
    rescale_rows(tile, row_max, row_sum, params.cols);
}

template <typename T>
__global__ void attn_kernel(Params params) {
    compute_block<T>(params, blockIdx.x);
}
'''

INLINED_TRITON = '''\
import triton
import triton.language as tl


@triton.jit
def row_max(scores):
    return tl.max(scores, 1)


@triton.jit
def row_sum(probs):
    return tl.sum(probs, 1)


@triton.jit
def mask_kv_tail(scores, cols, seqlen_k):
    return tl.where(cols[None, :] < seqlen_k, scores, float("-inf"))


@triton.jit
def mask_causal(scores, rows, cols, seqlen_k):
    limit = tl.minimum(rows + 1, seqlen_k)
    return tl.where(cols[None, :] < limit[:, None], scores, float("-inf"))


@triton.jit
def apply_offsets(scores, offsets):
    return scores + offsets[None, :]


@triton.jit
def attn_kernel(q, out, seqlen_k, CAUSAL: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    scores = tl.load(q + rows[:, None] * BLOCK + cols[None, :])
    scores = apply_offsets(scores, cols)
    if CAUSAL:
        scores = mask_causal(scores, rows, cols, seqlen_k)
    else:
        scores = mask_kv_tail(scores, cols, seqlen_k)
    maxima = row_max(scores)
    probs = tl.exp(scores - maxima[:, None])
    tl.store(out + rows, row_sum(probs))
'''


def test_helpers_of_a_kernel_that_inlines_upstream_functions_pair_with_those_functions_callees():
    """The port's kernel calls its helpers itself where upstream's kernel reaches them through
    functions the port folded into the kernel (``compute_block``, ``rescale_rows``): a helper
    pairs with such a callee when it is the one among them that shares the most of the helper's
    name words (``mask_kv_tail`` shares ``mask`` with two alike, and gets ``apply_mask`` once
    ``mask_causal`` has taken ``apply_mask_causal``); a helper whose only shared word is a generic
    verb (``apply_offsets``: ``apply_bias``, ``apply_scale``) stays unmatched."""
    from portq.tree.definition_match import definitions_of, match_definitions

    upstream = definitions_of(INLINED_CU.encode(), "csrc/attn_kernel.h")
    port = definitions_of(INLINED_TRITON.encode(), "attn.py")
    proposals, unmatched, _ = match_definitions(port, {"csrc/attn_kernel.h": upstream},
                                                {"attn.py": ["csrc/attn_kernel.h"]})
    found = {m.port.name: (m.upstream.name, m.how) for m in proposals}
    assert found["attn_kernel"] == ("attn_kernel", "name")
    assert found["row_max"] == ("reduce_max", "call graph")
    assert found["row_sum"] == ("reduce_sum", "call graph")
    assert found["mask_causal"] == ("apply_mask_causal", "call graph")
    assert found["mask_kv_tail"] == ("apply_mask", "call graph")
    assert "apply_offsets" in {d.name for d in unmatched}


def test_a_shared_name_word_pairs_a_helper_only_below_a_neighbour_matched_by_name():
    """The same kernel and helpers, the port's kernel paired with upstream's by look instead of
    by name: a helper sharing a word with one of its counterpart's callees is then not paired
    (a word shared at the end of a path of look-alikes is how a family's members get confused)."""
    from portq.tree.definition_match import CONFIDENCE_THRESHOLD, Match, _call_graph_evidence, definitions_of

    upstream = definitions_of(INLINED_CU.encode(), "csrc/attn_kernel.h")
    port = definitions_of(INLINED_TRITON.encode(), "attn.py")
    kernel = next(i for i, d in enumerate(port) if d.name == "attn_kernel")
    helper = next(i for i, d in enumerate(port) if d.name == "row_max")
    theirs = next(d for d in upstream if d.name == "attn_kernel")
    found = {}
    for how in ("name", "structure"):
        scored = {i: [] for i in range(len(port))}
        scored[kernel] = [Match(port[kernel], theirs, 0.9, how)]
        _call_graph_evidence(port, {i: upstream for i in range(len(port))}, scored)
        found[how] = max((m.confidence for m in scored[helper] if m.upstream.name == "reduce_max"), default=0.0)
    assert found["name"] >= CONFIDENCE_THRESHOLD > found["structure"]


FAMILY_OPS = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_fwd_kernel_pair(x_ptr, y_ptr, out_x_ptr, out_y_ptr, stride_x_t, stride_x_d, stride_o_t, stride_o_d,
                           n_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x_t + cols * stride_x_d)
    y = tl.load(y_ptr + row * stride_x_t + cols * stride_x_d)
    tl.store(out_x_ptr + row * stride_o_t + cols * stride_o_d, x * 2.0)
    tl.store(out_y_ptr + row * stride_o_t + cols * stride_o_d, y * 2.0)


@triton.jit
def _scale_bwd_kernel_pair(x_ptr, y_ptr, out_x_ptr, out_y_ptr, stride_x_t, stride_x_d, stride_o_t, stride_o_d,
                           n_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x_t + cols * stride_x_d)
    y = tl.load(y_ptr + row * stride_x_t + cols * stride_x_d)
    tl.store(out_x_ptr + row * stride_o_t + cols * stride_o_d, x * 0.5)
    tl.store(out_y_ptr + row * stride_o_t + cols * stride_o_d, y * 0.5)


@triton.jit
def _scale_bwd_kernel_one(x_ptr, out_ptr, stride_x_t, stride_o_t, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x_t + cols, mask=mask)
    tl.store(out_ptr + row * stride_o_t + cols, x * 0.5, mask=mask)


def _scale_fwd_pair(x, y, out_x, out_y):
    t, d = x.shape
    grid = (t, 1, 1)
    _scale_fwd_kernel_pair[grid](x, y, out_x, out_y, *x.stride(), *out_x.stride(), t, BLOCK=d)
    return out_x, out_y


def _scale_bwd(x, y, out_x, out_y, pair):
    t, d = x.shape
    if pair:
        _scale_bwd_kernel_pair[(t,)](x, y, out_x, out_y, x.stride(0), x.stride(1), out_x.stride(0),
                                     out_x.stride(1), t, BLOCK=d)
    else:
        _scale_bwd_kernel_one[(t,)](x, out_x, x.stride(0), out_x.stride(0), t, d, BLOCK=d)
    return out_x, out_y


def scale_fwd_pair(x, y):
    out_x = torch.empty_like(x)
    out_y = torch.empty_like(y)
    return _scale_fwd_pair(x, y, out_x, out_y)


def scale_bwd(x, y, pair=True):
    return _scale_bwd(x, y, torch.empty_like(x), torch.empty_like(y), pair)
'''

FAMILY_PORT = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _twin_rows(q, k, q_out, k_out, q_tok, q_dim, o_tok, o_dim, rows, WIDTH: tl.constexpr):
    tok = tl.program_id(0)
    dim = tl.arange(0, WIDTH)
    a = tl.load(q + tok * q_tok + dim * q_dim)
    b = tl.load(k + tok * q_tok + dim * q_dim)
    tl.store(q_out + tok * o_tok + dim * o_dim, a * 2.0)
    tl.store(k_out + tok * o_tok + dim * o_dim, b * 2.0)


def _run_twin(q, k, q_out, k_out):
    tokens, width = q.shape
    _twin_rows[(tokens, 1, 1)](q, k, q_out, k_out, *q.stride(), *q_out.stride(), tokens, WIDTH=width)
    return q_out, k_out


def twin_double(q, k):
    return _run_twin(q, k, torch.empty_like(q), torch.empty_like(k))
'''


def _family_proposals(upstream_text: str) -> dict[str, tuple[str, str]]:
    from portq.tree.definition_match import definitions_of, match_definitions

    upstream = definitions_of(upstream_text.encode(), "lib/scale_ops.py")
    port = definitions_of(FAMILY_PORT.encode(), "twin.py")
    proposals, _, _ = match_definitions(port, {"lib/scale_ops.py": upstream}, {"twin.py": ["lib/scale_ops.py"]})
    return {m.port.name: (m.upstream.name, m.how) for m in proposals}


def test_a_tie_between_look_alikes_is_no_ground_for_pairing_their_neighbours():
    """Upstream holds a kernel, its wrapper and its caller twice under two names (a copy kept for
    another caller). The renamed port's kernel resembles both copies alike: it is not settled on
    one of them for the call graph to pair its wrapper with that copy's wrapper, and the port is
    left unmatched rather than given one of the two."""
    chain = FAMILY_OPS[FAMILY_OPS.index("def _scale_fwd_pair"):FAMILY_OPS.index("def _scale_bwd(")]
    chain += FAMILY_OPS[FAMILY_OPS.index("def scale_fwd_pair"):FAMILY_OPS.index("def scale_bwd")]
    kernel = FAMILY_OPS[FAMILY_OPS.index("@triton.jit\ndef _scale_fwd_kernel_pair"):FAMILY_OPS.index("@triton.jit\ndef _scale_bwd_kernel_pair")]
    copy = (kernel + chain).replace("scale_fwd", "scale_copy")
    found = _family_proposals(FAMILY_OPS + "\n\n" + copy)
    assert not {"_run_twin", "_twin_rows", "twin_double"} & found.keys()



def test_a_method_pairs_with_the_same_method_of_the_class_its_sibling_matched():
    """``XentOp.forward`` is matched to ``LigerCrossEntropyFunction.forward``; its ``backward``, which
    resembles two upstream ``backward`` methods alike, pairs with the one of that same class."""
    from portq.tree.definition_match import CONFIDENCE_THRESHOLD, Match, _call_graph_evidence, definitions_of

    def autograd(owner: str, scale: str) -> str:
        return (f"class {owner}(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, target):\n"
                f"        loss, grad = _loss_rows(x, target, {scale})\n"
                "        ctx.save_for_backward(grad)\n"
                "        return loss\n\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (grad,) = ctx.saved_tensors\n"
                "        if not torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):\n"
                "            grad = grad * grad_output\n"
                "        return grad, None\n")

    upstream = definitions_of((autograd("LigerFusedLinearXEntropyFunction", "1.0") + "\n\n" +
                               autograd("LigerMarginLossFunction", "2.0")).encode(), "lib/losses.py")
    port = definitions_of(autograd("XentOp", "1.0").encode(), "xent.py")
    forward, backward = (next(i for i, d in enumerate(port) if d.name == name) for name in ("forward", "backward"))
    theirs = next(d for d in upstream if d.qualified_name == "LigerFusedLinearXEntropyFunction.forward")
    scored = {forward: [Match(port[forward], theirs, 0.8, "structure", 0.9)], backward: []}
    _call_graph_evidence(port, {forward: upstream, backward: upstream}, scored)
    by_owner = {m.upstream.owner: m.confidence for m in scored[backward]}
    assert by_owner["LigerFusedLinearXEntropyFunction"] >= CONFIDENCE_THRESHOLD
    assert by_owner.get("LigerMarginLossFunction", 0.0) < by_owner["LigerFusedLinearXEntropyFunction"] - 0.05


def test_a_name_word_that_abbreviates_upstream_words_matches_conservatively():
    """``bmm_bf16`` is upstream's ``batched_gemm_bf16``: ``bmm`` starts as ``batched`` does and its
    other letters follow in ``gemm``; every other word is the same. Such a name is scored below
    a word run, so that the definitions' likeness must carry part of the confidence; a word of two
    letters, one that skips a word, one out of order or beside another differing word is no abbreviation."""
    from portq.tree.definition_match import ABBREVIATION_SIMILARITY, WORD_RUN_SIMILARITY, abbreviates

    assert abbreviates("bmm", ("batched", "gemm"))
    assert abbreviates("rms", ("root", "mean", "square"))
    assert not abbreviates("bmm", ("gemm", "batched"))
    assert not abbreviates("bm", ("batched", "matmul"))
    assert not abbreviates("bgm", ("batched", "fp8", "gemm"))  # every word gives a letter
    assert name_similarity("bmm_bf16", "batched_gemm_bf16") == ABBREVIATION_SIMILARITY < WORD_RUN_SIMILARITY
    assert name_similarity("batched_gemm_bf16", "bmm_bf16") == ABBREVIATION_SIMILARITY
    assert name_similarity("bmm_fp8", "batched_gemm_bf16") < ABBREVIATION_SIMILARITY
    assert name_similarity("bmm_bf16", "batched_gemm_a8w8") < ABBREVIATION_SIMILARITY
LINEAR_LOSS_V1 = '''\
def linear_loss(inputs, linear, target, ignore_index):
    rows, hidden = inputs.shape
    vocab = linear.shape[0]
    grad_linear = torch.zeros_like(linear)
    grad_input = torch.zeros_like(inputs)
    logits = inputs @ linear.t()
    loss = cross_entropy(logits, target, ignore_index)
    grad_input = logits @ linear
    torch.addmm(grad_linear, logits.t(), inputs, out=grad_linear)
    return loss, grad_input, grad_linear
'''

LINEAR_LOSS_V2 = LINEAR_LOSS_V1.replace("linear", "weight").replace("ignore_index):", "bias=None, ignore_index=-100):").replace(
    "    loss = ", "    if bias is not None:\n        logits = logits + bias\n    loss = ")

LINEAR_LOSS_PORT = '''\
def linear_loss(hidden, weight, labels, skip):
    rows, width = hidden.shape
    vocab = weight.shape[0]
    grad_weight = torch.zeros_like(weight)
    grad_hidden = torch.zeros_like(hidden)
    logits = (hidden @ weight.t()).float()
    loss = cross_entropy(logits, labels, skip)
    grad_hidden = logits @ weight
    torch.addmm(grad_weight, logits.t(), hidden, out=grad_weight)
    return loss, grad_hidden, grad_weight
'''


def test_a_version_whose_interface_moved_away_from_the_port_is_not_its_base(tmp_path):
    """A re-implementation keeps upstream's parameters under its own names. Upstream then renames
    a parameter to the port's word and adds one the port does not take (v2): v2 holds more of the
    port's tokens, but its interface is not the port's, so the base is v1."""
    from portq.tree import provenance
    from portq.upstream.history import Upstream

    clone = tmp_path / "kernlib"
    clone.mkdir()
    _git(clone, "init", "-q", "-b", "main")
    (clone / "config.py").write_text(UNRELATED)
    shas = []
    for text in (LINEAR_LOSS_V1, LINEAR_LOSS_V2):
        (clone / "loss.py").write_text(text)
        _git(clone, "add", "-A")
        _git(clone, "commit", "-q", "-m", f"version {len(shas) + 1}")
        shas.append(_git(clone, "rev-parse", "HEAD"))
    tree = tmp_path / "engine"
    tree.mkdir()
    (tree / "loss.py").write_text(LINEAR_LOSS_PORT)
    with Upstream(clone, "kernlib") as opened:
        found = provenance.survey(opened, opened.resolve("HEAD"), tree, ["loss.py"])
        port = provenance.definitions_of(LINEAR_LOSS_PORT.encode(), "loss.py")[0]
        versions = [provenance.definitions_of(text.encode(), "loss.py")[0] for text in (LINEAR_LOSS_V1, LINEAR_LOSS_V2)]
    # the later version holds more of the port's tokens ...
    assert provenance.version_similarity(port, versions[1]) > provenance.version_similarity(port, versions[0])
    # ... yet the port's base is the version with its interface
    assert found.base.commit == shas[0]
    assert found.base.scores[shas[0]] > found.base.scores[shas[1]]


def test_interface_agreement_reads_host_code_in_either_language_and_device_code_in_its_own():
    """A Python op takes what the C++ function binding it takes, so a parameter added to the
    binding moves it away from a Python port; a Triton kernel's parameters (pointers, strides,
    block sizes) do not correspond to a CUDA kernel's, so those are not compared."""
    from portq.tree.definition_match import Definition
    from portq.tree.provenance import interface_agreement

    def definition(file: str, kind: str, count: int) -> Definition:
        return Definition(file, "f", "f", kind, "", 1, 2, "", parameter_count=count)

    python_op = definition("ops/act.py", "function", 2)
    assert interface_agreement(python_op, definition("csrc/act.cu", "function", 2)) == 1.0
    assert interface_agreement(python_op, definition("csrc/act.cu", "function", 3)) == pytest.approx(2 / 3)
    assert interface_agreement(definition("ops/loss.py", "method", 4), definition("lib/loss.py", "method", 5)) == 0.8
    triton_kernel = definition("ops/act.py", "triton_kernel", 6)
    assert interface_agreement(triton_kernel, definition("csrc/act.cu", "cuda_kernel", 3)) == 1.0
    assert interface_agreement(triton_kernel, definition("lib/act.py", "triton_kernel", 8)) == 0.75


def test_parameters_are_read_after_the_definitions_name():
    """A decorator's arguments are not the parameters of the declaration it decorates, a
    template's arguments not those of its kernel, and commas inside a type separate none."""
    from portq.tree.definition_match import definitions_of
    from portq.tree.provenance import parameter_count

    [declaration] = definitions_of(b'@compile_ops("module_act", develop=True)\n'
                                   b'def silu_and_mul(out: Tensor, input: Tensor, limit: float = 0.0) -> None: ...\n',
                                   "ops/act.py")
    assert parameter_count(declaration) == 3
    [kernel] = definitions_of(b"template <typename T, int N>\n"
                              b"__global__ void act_kernel(T* out, const std::map<int, int>& table, int d) {}\n",
                              "csrc/act.cu")
    assert parameter_count(kernel) == 3
    [method] = definitions_of(b"class Op:\n    def forward(ctx, x, shape=(1, 2),):\n        return x\n", "ops/op.py")
    assert parameter_count(method) == 3


def test_each_commits_score_is_the_same_as_comparing_every_file_at_every_commit(tmp_path):
    """The base search compares again only the files a commit changed (for the matches whose
    names they define, a moved file's older path too): every commit's score is still what
    comparing every upstream file's definitions at that commit gives."""
    from portq.tree import provenance
    from portq.upstream.history import Upstream

    clone = tmp_path / "kernlib"
    clone.mkdir()
    _git(clone, "init", "-q", "-b", "main")
    (clone / "config.py").write_text(UNRELATED)
    norm = "def rms_norm" + NORM_BODY
    edits = [("scale.py", KERNEL_V1), ("norm.py", norm), ("scale.py", KERNEL_V2),
             ("norm.py", norm.replace("return out", "return out.contiguous()")), ("config.py", UNRELATED + "\n"),
             ("kernels/scale.py", KERNEL_V3)]  # moved: the older versions are in a file not its own
    for path, text in edits:
        if path == "kernels/scale.py":
            (clone / "kernels").mkdir()
            _git(clone, "mv", "scale.py", path)
        (clone / path).write_text(text)
        _git(clone, "add", "-A")
        _git(clone, "commit", "-q", "-m", f"edit {path}")
    tree = tmp_path / "engine"
    tree.mkdir()
    (tree / "ops.py").write_text(KERNEL_V2 + "\n\n" + norm)
    with Upstream(clone, "kernlib") as opened:
        found = provenance.survey(opened, opened.resolve("HEAD"), tree, ["ops.py"])
        scores = found.file_bases["ops.py"].scores
        direct = provenance.BlobDefinitions(opened)
        expected = {}
        for commit in scores:
            listing = _git(clone, "ls-tree", "-r", commit).splitlines()
            blobs = {line.split("\t")[1]: line.split()[2] for line in listing if line.endswith(".py")}
            direct.read(blobs.values())
            values = []
            for proposal in found.proposals:
                best = 0.0
                for path, blob in blobs.items():
                    for name in direct.names_like(path, blob, proposal.symbol, proposal.port.name):
                        best = max(best, direct.best_in(proposal.port, path, blob, name) or 0.0)
                values.append(best)
            expected[commit] = sum(values) / len(values)
    assert {p.port.name for p in found.proposals} == {"_scale_rows_kernel", "scale_rows", "rms_norm"}
    assert len(scores) == 5  # every commit touching the matched files, config.py's own left out
    assert scores == pytest.approx(expected)


GATHER_HELPER = '''\
def gather_row_offsets(n_rows, n_cols):
    offsets = []
    for row in range(n_rows):
        offsets.append(row * n_cols)
    return offsets
'''


def _init_per_hash_seed(tmp_path: Path, seeds: tuple[str, ...]) -> list[tuple[dict, str]]:
    """``portq init --json --dry-run`` of one tree in a child process per hash seed: what it
    prints on stdout (its timings left out) and the files it would write (on stderr)."""
    outputs = []
    for seed in seeds:
        result = subprocess.run([sys.executable, "-m", "portq.cli", "init", "--upstream",
                                 f"kernlib={tmp_path / 'kernlib'}", "--tree", "engine", "--json", "--dry-run"],
                                cwd=tmp_path, capture_output=True, text=True,
                                env={**os.environ, "PYTHONHASHSEED": seed})
        assert result.returncode == 0, result.stderr
        found = json.loads(result.stdout)
        found.pop("seconds")
        outputs.append((found, result.stderr))
    return outputs


def test_init_gives_the_same_answer_under_every_hash_seed(tmp_path):
    # one port file drawing on two upstream files whose names are as frequent: the row's name,
    # every proposal and the base must not follow the order a set of strings happens to have
    clone = tmp_path / "kernlib"
    (clone / "kernlib").mkdir(parents=True)
    _git(clone, "init", "-q", "-b", "main")
    (clone / "kernlib" / "scale.py").write_text(KERNEL_V1)
    (clone / "kernlib" / "offsets.py").write_text(GATHER_HELPER)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "first")
    (clone / "kernlib" / "scale.py").write_text(KERNEL_V2)
    _git(clone, "commit", "-q", "-am", "second")
    _tree(tmp_path, KERNEL_V2 + "\n\n" + GATHER_HELPER)
    outputs = _init_per_hash_seed(tmp_path, ("0", "1", "2", "3", "4", "5"))
    found = outputs[0][0]
    assert {p["upstream_path"] for p in found["proposals"]} == {"kernlib/scale.py", "kernlib/offsets.py"}
    assert len(found["rows"]) == 1
    assert outputs == [outputs[0]] * len(outputs)


def test_a_row_owns_the_file_a_ported_definition_moved_to_after_the_base(tmp_path):
    # the port was taken when the helper sat beside the kernel; upstream has since moved it into
    # a file of its own: the anchor names it where it was, and the row owns both files, so a scan
    # from the base follows the helper through the move
    clone = tmp_path / "kernlib"
    (clone / "kernlib").mkdir(parents=True)
    _git(clone, "init", "-q", "-b", "main")
    (clone / "kernlib" / "config.py").write_text(UNRELATED)
    (clone / "kernlib" / "scale.py").write_text(KERNEL_V1 + "\n\n" + GATHER_HELPER)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "first")
    first = _git(clone, "rev-parse", "HEAD")
    (clone / "kernlib" / "scale.py").write_text(KERNEL_V3)
    (clone / "kernlib" / "offsets.py").write_text(GATHER_HELPER)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "move the helper out")
    _tree(tmp_path, KERNEL_V1 + "\n\n" + GATHER_HELPER)
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["base"]["commit"] == first
    proposed = {p["definition"]: (p["upstream_path"], p["at"]) for p in found["proposals"]}
    assert proposed["gather_row_offsets"] == ("kernlib/scale.py", first)
    assert [(row["id"], sorted(row["paths"])) for row in found["rows"]] == [
        ("SCALE", ["kernlib/offsets.py", "kernlib/scale.py"])]


def test_a_row_owns_only_the_files_of_the_base_where_nothing_moved(tmp_path, upstream):
    clone, _ = upstream
    _tree(tmp_path, KERNEL_V2)
    found = json.loads(_init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--json").stdout)
    # renamed as a whole file since the base: the scan follows a rename on its own
    assert [row["paths"] for row in found["rows"]] == [["kernlib/scale.py"]]


AUTOGRAD_UPSTREAM = KERNEL_V1 + '''

class ScaleRowsFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = ctx_scale_of(scale)
        return scale_rows(x, scale)

    @staticmethod
    def backward(ctx, grad):
        return scale_rows(grad, ctx.scale), None

    @staticmethod
    def ctx_scale_of(scale):
        return float(scale)
'''

AUTOGRAD_PORT = KERNEL_V1 + '''

class RowScaleOp(torch.autograd.Function):
    """Inference only: no backward."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = ctx_scale_of(scale)
        return scale_rows(x, scale)
'''


def test_a_method_the_ports_class_leaves_out_is_proposed_not_carried(tmp_path, upstream):
    clone, _ = upstream
    (clone / "kernlib" / "ops" / "scale_rows.py").write_text(AUTOGRAD_UPSTREAM)
    _git(clone, "commit", "-q", "-am", "an autograd function")
    _tree(tmp_path, AUTOGRAD_PORT)
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine")
    assert result.returncode == 0, result.stderr
    sidecar, _ = read_sidecar(tmp_path / "portq-anchors.toml")
    proposed = {e.reference for e in sidecar.entries if e.kind == "ports"}
    assert "kernlib:kernlib/ops/scale_rows.py::ScaleRowsFunction.forward" in proposed
    left_out = [(e.reference, e.tree) for e in sidecar.entries if e.kind == "not-carried"]
    # backward: the port's class has none, and nothing it ports calls it; ctx_scale_of is called by
    # the ported forward (folded in or imported, the port still reaches it): never declared
    assert left_out == [("kernlib:kernlib/ops/scale_rows.py::ScaleRowsFunction.backward",
                         "third_party/row_scale.py::RowScaleOp.forward")]
    assert "not carried" in result.stdout and "ScaleRowsFunction.backward" in result.stdout
    listed = subprocess.run([sys.executable, "-m", "portq.cli", "matrix", "--json"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert not {p["kind"] for p in json.loads(listed.stdout)["problems"]} & {"sidecar-unresolved"}


def test_a_re_implementation_is_anchored_without_a_pin_and_a_copy_with_one(tmp_path, upstream):
    # a pin says the port is upstream's code at that commit (the classifier reads it as a copy):
    # init pins a copy's anchors at its base, and leaves a re-implementation's unpinned, its base
    # still reported
    clone, shas = upstream
    renamed = (KERNEL_V2.replace("_scale_rows_kernel", "_rows_times_kernel").replace("scale_rows", "rows_times")
               .replace("x_ptr", "src").replace("out_ptr", "dst").replace("values", "v").replace("BLOCK", "TILE"))
    (tmp_path / "reimpl" / "engine").mkdir(parents=True)
    (tmp_path / "reimpl" / "engine" / "ops.py").write_text(renamed)
    rewritten = json.loads(_init(tmp_path / "reimpl", "--upstream", f"kernlib={clone}", "--tree", "engine",
                                 "--json").stdout)
    assert rewritten["proposals"] and rewritten["base"]["commit"] in shas
    assert {p["at"] for p in rewritten["proposals"]} == {""}
    (tmp_path / "copy").mkdir()
    _tree(tmp_path / "copy", KERNEL_V2)
    copied = json.loads(_init(tmp_path / "copy", "--upstream", f"kernlib={clone}", "--tree", "engine", "--json").stdout)
    assert {p["at"] for p in copied["proposals"]} == {shas[1]}


CANDIDATE_SCORES = '''
import sys
from portq.tree.provenance import UpstreamSnapshot
from portq.upstream.history import Upstream
with Upstream(sys.argv[1], "kernlib") as opened:
    snapshot = UpstreamSnapshot.read(opened, "HEAD")
    port = open(sys.argv[2], "rb").read()
    print([(path, score.hex()) for path, score in snapshot.candidate_files(port)])
'''


def test_candidate_file_scores_are_the_same_to_the_last_bit_under_every_hash_seed(tmp_path):
    # a file's score sums the weights of the identifiers it shares with the port, a set: summed in
    # the set's order the last bits vary from run to run, and near-equal files swap at the cut
    clone = tmp_path / "kernlib"
    (clone / "kernlib").mkdir(parents=True)
    _git(clone, "init", "-q", "-b", "main")
    words = [f"{a}_{b}" for a in ("row", "col", "tile", "lane", "warp", "block") for b in ("base", "end", "step",
                                                                                          "span", "mask", "ptr")]
    for number in range(12):
        used = words[number:number + 20]
        (clone / "kernlib" / f"ops{number}.py").write_text(
            f"def op{number}(x):\n" + "".join(f"    {w} = x + {i}\n" for i, w in enumerate(used)) + "    return x\n")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "ops")
    port = tmp_path / "port.py"
    port.write_text("def port(x):\n" + "".join(f"    {w} = x\n" for w in words) + "    return x\n")
    printed = {subprocess.run([sys.executable, "-c", CANDIDATE_SCORES, str(clone), str(port)], capture_output=True,
                              text=True, env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout
               for seed in ("0", "1", "2", "3", "4", "5", "6", "7")}
    assert len(printed) == 1, printed


TWO_FUNCTIONS = '''\
import torch


def scale_rows_by_factor(x, factor):
    out = torch.empty_like(x)
    out.copy_(x * factor)
    return out


def shift_rows_by_offset(x, offset):
    out = torch.empty_like(x)
    out.copy_(x + offset)
    return out


class ScaleFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        out = torch.empty_like(x)
        out.copy_(x * factor)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


class ShiftFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, offset):
        out = torch.empty_like(x)
        out.copy_(x + offset)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None
'''


def test_a_method_is_anchored_by_its_class_where_the_file_has_two_of_that_name(tmp_path):
    """Two autograd functions of one upstream file both define ``forward``: an anchor naming the bare
    method would be ambiguous, so the proposal names the class too, as a hand-written anchor does."""
    clone = tmp_path / "kernlib"
    (clone / "kernlib").mkdir(parents=True)
    _git(clone, "init", "-q", "-b", "main")
    (clone / "kernlib" / "functions.py").write_text(TWO_FUNCTIONS)
    (clone / "kernlib" / "config.py").write_text(UNRELATED)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "two functions")
    tree = tmp_path / "engine"
    (tree / "third_party").mkdir(parents=True)
    (tree / "third_party" / "functions.py").write_text("# Adapted from kernlib\n" + TWO_FUNCTIONS)
    result = _init(tmp_path, "--upstream", f"kernlib={clone}", "--tree", "engine", "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    proposed = {(p["definition"], p["upstream_symbol"]) for p in found["proposals"]}
    assert ("ScaleFunction.forward", "ScaleFunction.forward") in proposed
    assert ("ShiftFunction.forward", "ShiftFunction.forward") in proposed
    assert not any(symbol == "forward" for _, symbol in proposed)
    listed = subprocess.run([sys.executable, "-m", "portq.cli", "matrix", "--json"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    kinds = {p["kind"] for p in json.loads(listed.stdout)["problems"]}
    assert not kinds & {"sidecar-unresolved", "anchor-without-definition", "anchor-unowned"}
