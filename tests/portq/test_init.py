"""portq init: anchors, base and rows proposed for a port that records no provenance."""
from __future__ import annotations

import json
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

    wrapper = definition("ops.py", "scale", frozenset({"_rows_kernel"}))
    kernel = definition("ops.py", "_rows_kernel", kind="triton_kernel")
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
