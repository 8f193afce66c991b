"""Exact citations: the cited line is the quoted line, in unit tests, the golden report and the demo."""
from __future__ import annotations

from pathlib import Path

import pytest

from portq.core.model import FLAGGED
from portq.pipeline.demo import EXAMPLES_DIR, run_demo
from portq.reporting.citations import Sources
from tests.portq.citation_check import reader, verify_callers, verify_report
from tests.portq.golden.reports.scenario import Scenario, scanned

SOURCE = """\
import triton


# portq: ports vllm:a.cu::gather
@triton.jit
def gather_kernel(
    src,
    dst,
):
    pass


def gather(src, dst, n):
    grid = (n,)
    gather_kernel[grid](
        src, dst)
"""

CUDA = """\
void gather(int num_tokens) {
  const int num_tokens = slot_mapping.size(0);
  constexpr int32_t thread_block_size = 64;
  dim3 grid(num_tokens);
  dim3 block(thread_block_size);
  vllm::gather<float, 576, thread_block_size>
      <<<grid, block, 0, stream>>>(
          src, dst);
}
"""


def sources(text=SOURCE):
    return Sources(lambda side, path: text if path == "k.py" else None)


def test_a_line_holding_the_quote_is_kept():
    citation = sources().cite("tree", "k.py", 7, "src,")
    assert (citation.place, citation.quote) == ("k.py:7", ("src,",))


def test_a_quote_recorded_under_the_wrong_line_is_cited_where_it_is():
    citation = sources().cite("tree", "k.py", 5, "src,")
    assert (citation.place, citation.quote) == ("k.py:7", ("src,",))


def test_a_definition_is_cited_at_its_declaring_line_not_its_decorator():
    citation = sources().cite("tree", "k.py", 5, "src,", name="gather_kernel")
    assert (citation.place, citation.quote) == ("k.py:6", ("def gather_kernel(",))


def test_a_quote_no_line_holds_is_cited_by_path_alone_never_at_another_line():
    citation = sources().cite("tree", "k.py", 14, "grid = (num_tokens,)")
    assert (citation.place, citation.quote, citation.found) == ("k.py", ("grid = (num_tokens,)",), False)


def test_a_quote_recorded_under_the_wrong_file_is_cited_in_the_file_of_that_side_that_holds_it():
    files = {"kernel.py": "def k(x):\n    pass\n", "wrapper.py": "def w(x):\n    padded = next_pow2(x)\n    k(padded)\n"}
    found = Sources(lambda side, path: files.get(path), lambda side: sorted(files))
    citation = found.cite("upstream-new", "kernel.py", 2, "padded = next_pow2(x); k(padded)")
    assert (citation.place, citation.quote) == ("wrapper.py:2-3", ("padded = next_pow2(x)", "k(padded)"))


def test_an_unreadable_file_keeps_the_record_and_says_unchecked():
    citation = sources().cite("tree", "missing.py", 3, "x = 1")
    assert citation.checked is False and citation.quote == ("x = 1",)


def test_triton_launch_geometry_quotes_the_grid_assignment_and_the_launch():
    citation = sources().launch_geometry("tree", "k.py", 15)
    assert citation.place == "k.py:14-15"
    assert citation.quote == ("grid = (n,)", "gather_kernel[grid](")


def test_cuda_launch_geometry_follows_the_block_size_to_its_literal():
    citation = Sources(lambda side, path: CUDA).launch_geometry("upstream-old", "a.cu", 6, 1)
    assert citation.place == "a.cu:3-7"
    assert citation.quote == ("constexpr int32_t thread_block_size = 64;", "dim3 grid(num_tokens);",
                              "dim3 block(thread_block_size);", "<<<grid, block, 0, stream>>>(")


def test_every_citation_of_the_golden_seed000_report_holds_its_quote(tmp_path):
    scenario = scanned(tmp_path)
    document = scenario.portq("file-issue", "1", "--json").json()
    markdown = Path(document["path"]).read_text()
    read = reader(scenario.root / "tree", scenario.root / "upstream", document["commit"]["sha"])
    printed = verify_report(markdown, document, read, (scenario.root / "matrix.toml").read_text())
    assert printed >= 8 and len(document["citations"]) >= 8


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("demo"))


def test_every_flagged_stale_tree_report_of_the_demo_cites_exactly_and_names_enclosing_callers(demo, tmp_path):
    tree = EXAMPLES_DIR / "stale-tree"
    flags = ["--tree", str(tree), "--matrix", str(tree / "kernel-matrix.toml"),
             "--ledger", str(demo.ledgers["stale-tree"])]
    for name, built in demo.upstreams.items():
        flags += ["--upstream", f"{name}={built.path}"]
    scenario = Scenario(tmp_path, "", [])
    scenario.flags = lambda: flags
    flagged = [o for o in demo.outcomes if o.target == "stale-tree" and o.verdict in FLAGGED]
    assert len(flagged) >= 5
    checked = hops = 0
    for outcome in flagged:
        built = demo.upstreams[outcome.series]
        range_text = f"{built.shas[0]}..{built.shas[-1]}"
        result = scenario.portq("file-issue", str(outcome.position), "--range", range_text, "--json")
        assert result.code == 0, result.err
        document = result.json()
        markdown = Path(document["path"]).read_text()
        read = reader(tree, built.path, outcome.sha)
        checked += verify_report(markdown, document, read, (tree / "kernel-matrix.toml").read_text())
        hops += verify_callers(markdown, document, tree)
    assert checked >= 5 * len(flagged) and hops >= len(flagged)


PORT_CPP = """\
void GatherMlaCache(const Tensor& src, int64_t num_tokens, cudaStream_t stream) {
  const int threads = 64;
  const unsigned grid = static_cast<unsigned>(num_tokens);
  GatherMlaCacheKernel<<<grid, threads, 0, stream>>>(
      src.data(), token_to_seq, num_tokens);
}
"""


def test_a_cpp_port_launch_quotes_its_threads_and_grid_lines():
    citation = Sources(lambda side, path: PORT_CPP).launch_geometry("tree", "src/vt/cuda/cuda_mla_prefill.cu", 4, 1)
    assert citation.place == "src/vt/cuda/cuda_mla_prefill.cu:2-4"
    assert citation.quote == ("const int threads = 64;", "const unsigned grid = static_cast<unsigned>(num_tokens);",
                              "GatherMlaCacheKernel<<<grid, threads, 0, stream>>>(")


def test_a_reviewed_entrys_history_prints_no_unchecked_citation(tmp_path):
    scenario = scanned(tmp_path)
    scenario.portq("review", "1", "--verdict", "NEEDS_REVIEW", "--because", "measure the page-task launch first", "--who", "ana")
    document = scenario.portq("file-issue", "1", "--json").json()
    markdown = Path(document["path"]).read_text()
    assert "The reviewer wrote: measure the page-task launch first" in markdown and "- Scan in wave" in markdown
    read = reader(scenario.root / "tree", scenario.root / "upstream", document["commit"]["sha"])
    verify_report(markdown, document, read, (scenario.root / "matrix.toml").read_text())


def test_a_one_line_definition_whose_text_holds_a_semicolon_is_cited_at_its_line():
    text = "#include <torch/all.h>\n\nvoid index_keys(Tensor k) { quant_cache(k); }\n"
    citation = Sources(lambda side, path: text).cite("tree", "index.cu", 3, "void index_keys(Tensor k) { quant_cache(k); }")
    assert (citation.place, citation.found) == ("index.cu:3", True)
    assert citation.quote == ("void index_keys(Tensor k) { quant_cache(k); }",)


def test_a_change_that_quotes_the_same_lines_before_and_after_fails_the_check():
    text = "void f(int n) {\n  dim3 grid(n);\n}\n"
    same = {"side": "upstream-old", "path": "a.cu", "line": 2, "end_line": None, "place": "a.cu:2",
            "quote": ["dim3 grid(n);"], "checked": True, "found": True}
    context = {"citations": [same, {**same, "side": "upstream-new"}],
               "halves": [{"deciding": [{"changes": [{"fact": "grid (n,) changed", "before": same,
                                                      "after": {**same, "side": "upstream-new"}}]}]}]}
    with pytest.raises(AssertionError, match="quote the same lines"):
        verify_report("- before `a.cu:2`: `dim3 grid(n);`", context, lambda side, path: text)
