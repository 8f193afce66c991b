"""The in-tree index: ports by upstream symbol, not-carried declarations, the cache."""
from __future__ import annotations

import portq.tree.tree_index
from portq.tree.tree_index import TreeIndex

PORT = '''\
# portq: not-carried vllm:csrc/a.cu::cp_gather_cache -- sibling


# portq: ports vllm:csrc/a.cu::gather_kernel
# portq: ports vllm:csrc/a.cu::gather_helper
@triton.jit
def _gather_kernel(x_ptr):
    pass


# portq: ports vllm:csrc/a.cu::gather_kernel
def gather_kernel_reference(x):
    return x
'''


def _write(root, files):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_an_upstream_symbol_may_have_several_ports(tmp_path):
    index = TreeIndex.from_sources({"kernels/g.py": PORT})
    ports = index.ports_for("vllm", {"csrc/a.cu"}, "gather_kernel", "vllm::gather_kernel")
    assert {p.definition.qualified_name for p in ports} == {"_gather_kernel", "gather_kernel_reference"}


def test_a_definition_may_port_several_upstream_symbols(tmp_path):
    index = TreeIndex.from_sources({"kernels/g.py": PORT})
    assert index.upstream_symbols_ported_by("_gather_kernel") == {"gather_kernel", "gather_helper"}


def test_ports_match_upstream_name_and_path_only(tmp_path):
    index = TreeIndex.from_sources({"kernels/g.py": PORT})
    assert index.ports_for("vllm", {"csrc/b.cu"}, "gather_kernel", "gather_kernel") == []
    assert index.ports_for("aiter", {"csrc/a.cu"}, "gather_kernel", "gather_kernel") == []
    assert index.ports_for("vllm", {"csrc/b.cu", "csrc/a.cu"}, "gather_kernel", "gather_kernel")


def test_module_level_not_carried_declaration_is_found(tmp_path):
    index = TreeIndex.from_sources({"kernels/g.py": PORT})
    (anchor,) = index.not_carried_for("vllm", {"csrc/a.cu"}, "cp_gather_cache", "vllm::cp_gather_cache")
    assert anchor.cite == "kernels/g.py:1"


def test_ported_definitions_carry_their_signature(tmp_path):
    index = TreeIndex.from_sources({"kernels/g.py": PORT})
    (port, *_) = index.ports_for("vllm", {"csrc/a.cu"}, "gather_helper", "gather_helper")
    assert port.definition.signature.param_names == ["x"]


def test_second_build_reads_the_cache_and_a_change_invalidates_it(tmp_path):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT, "examples/up/a.py": "# portq: ports vllm:x.py::y\ndef y():\n    pass\n"})
    first = TreeIndex.build(root, cache)
    assert len(list(cache.glob("tree-index-*.json"))) == 1
    assert "examples/up/a.py" not in first.files
    (root / "kernels/g.py").write_text(PORT.replace("gather_helper", "gather_other"))
    second = TreeIndex.build(root, cache)
    assert len(list(cache.glob("tree-index-*.json"))) == 2
    assert second.upstream_symbols_ported_by("_gather_kernel") == {"gather_kernel", "gather_other"}
    again = TreeIndex.build(root, cache)
    assert [a.to_json() for a in again.anchors] == [a.to_json() for a in second.anchors]


def test_damaged_cache_is_rebuilt(tmp_path):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT})
    TreeIndex.build(root, cache)
    (cached,) = cache.glob("tree-index-*.json")
    cached.write_text("{not json")
    assert len(TreeIndex.build(root, cache).anchors) == 4


TOOL_DOC = '''\
"""Anchors look like ``# portq: ports vllm:csrc/a.cu::gather_kernel``."""
from kernels.g import gather_kernel_reference


def run(x):
    return gather_kernel_reference(x)
'''


def test_anchors_are_read_only_under_the_rows_tree_paths_but_callers_everywhere(tmp_path):
    root = tmp_path / "tree"
    _write(root, {"kernels/g.py": PORT, "tool/doc.py": TOOL_DOC})
    index = TreeIndex.build(root, port_roots=["kernels/"])
    assert {a.file for a in index.anchors} == {"kernels/g.py"}
    callers = index.reachability.callers("gather_kernel_reference", "kernels/g.py", "gather_kernel_reference")
    assert [c.cite for c in callers.non_test] == ["tool/doc.py:6"]


def test_without_an_existing_tree_path_every_file_may_hold_anchors(tmp_path):
    root = tmp_path / "tree"
    _write(root, {"kernels/g.py": PORT, "tool/doc.py": TOOL_DOC})
    index = TreeIndex.build(root, port_roots=["port/missing/"])
    assert {a.file for a in index.anchors} == {"kernels/g.py", "tool/doc.py"}


def test_nested_git_repositories_are_not_part_of_the_tree(tmp_path):
    root = tmp_path / "tree"
    _write(root, {"kernels/g.py": PORT, "demo/upstream/vllm/caller.py": TOOL_DOC})
    (root / "demo/upstream/vllm/.git").mkdir()
    index = TreeIndex.build(root, port_roots=["kernels/"])
    assert not any(path.startswith("demo/") for path in index.files)


def test_the_cache_is_keyed_by_the_port_roots_too(tmp_path):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT, "tool/doc.py": TOOL_DOC})
    TreeIndex.build(root, cache, port_roots=["kernels/"])
    everywhere = TreeIndex.build(root, cache)
    assert "tool/doc.py" in {a.file for a in everywhere.anchors}


def test_portq_matrix_lists_no_problem_from_anchor_examples_in_the_tools_own_source(tmp_path, capsys, monkeypatch):
    import json

    from portq.cli import main

    root = tmp_path / "tree"
    _write(root, {"kernels/g.py": PORT, "portq/tree/anchors.py": TOOL_DOC})
    (tmp_path / "matrix.toml").write_text(
        '[[row]]\nid = "K"\ntitle = "k"\nupstream = "vllm"\npaths = ["csrc/a.cu"]\ntree = ["kernels/"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["matrix", "--json", "--tree", str(root), "--matrix", str(tmp_path / "matrix.toml"),
                 "--ledger", str(tmp_path / "ledger.sqlite")]) == 0
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert problems and not any(p["file"] == "portq/tree/anchors.py" for p in problems)


def _records(index):
    return [record.to_json() for record in index.files.values()]


def test_an_on_demand_index_is_of_the_tree_as_read_when_it_was_made(tmp_path):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT, "tests/use.py": "from kernels.g import _gather_kernel\n_gather_kernel(1)\n"})
    expected = TreeIndex.build(root, port_roots=["kernels/"])
    index = TreeIndex.on_demand(root, cache, ["kernels/"])  # the bytes are read here, parsed later
    (root / "kernels/g.py").write_text(PORT.replace("gather_helper", "gather_other"))
    (root / "tests/use.py").write_text("")
    assert index.key == expected.key
    assert index.upstream_symbols_ported_by("_gather_kernel") == {"gather_kernel", "gather_helper"}
    assert [s.file for s in index.reachability.callers("_gather_kernel", "kernels/g.py", "_gather_kernel").test] \
        == ["tests/use.py"]
    assert _records(index) == _records(expected)
    index.save()
    assert [p.name for p in cache.glob("tree-index-*.json")] == [f"tree-index-{expected.key}.json"]
    assert _records(TreeIndex.on_demand(root, cache, ["kernels/"])) != _records(expected)  # the edits, now


def test_an_on_demand_index_answers_mapping_from_the_port_files_as_read_at_its_start(tmp_path):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT, "tests/use.py": "# portq: ports vllm:csrc/b.cu::other\ndef f():\n    pass\n"})
    expected = TreeIndex.build(root, port_roots=["kernels/"])
    index = TreeIndex.on_demand(root, cache, ["kernels/"])
    (root / "kernels/g.py").write_text(PORT.replace("csrc/a.cu", "csrc/z.cu"))
    for kind in ("ports", "not-carried"):
        answered = index.anchors_for_path("vllm", {"csrc/a.cu", "csrc/b.cu"}, kind)
        assert answered == expected.anchors_for_path("vllm", {"csrc/a.cu", "csrc/b.cu"}, kind)
        assert answered and {a.file for a in answered} == {"kernels/g.py"}  # anchors outside the port roots: none
    assert index.anchors_for_path("vllm", {"csrc/z.cu"}) == []
    assert index.anchors_for_path("sglang", {"csrc/a.cu"}) == []
    assert _records(index) == _records(expected)


def _counting_index_file(monkeypatch) -> list[str]:
    import portq.tree.tree_index as tree_index

    indexed: list[str] = []
    real = tree_index.index_file

    def counting(source, path, anchors=True, **options):
        indexed.append(path)
        return real(source, path, anchors, **options)

    monkeypatch.setattr(tree_index, "index_file", counting)
    return indexed


CALLER = "from kernels.g import _gather_kernel\n\n\ndef launch(x):\n    _gather_kernel[(1,)](x)\n"


def test_a_caller_query_parses_only_the_files_that_hold_the_name(tmp_path, monkeypatch):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT, "ops/launch.py": CALLER,
                  **{f"other/m{n}.py": f"def f{n}():\n    return g{n}()\n" for n in range(10)}})
    expected = TreeIndex.build(root, port_roots=["kernels/"])
    indexed = _counting_index_file(monkeypatch)
    index = TreeIndex.on_demand(root, cache, ["kernels/"])
    assert index.anchors and indexed == []  # anchors are read from the port files' parses alone
    callers = index.reachability.callers("_gather_kernel", "kernels/g.py", "_gather_kernel")
    assert [site.cite for site in callers.non_test] == ["ops/launch.py:5"]
    assert sorted(indexed) == ["kernels/g.py", "ops/launch.py"]
    assert index.definitions_by_name["f3"] == expected.definitions_by_name["f3"]
    assert sorted(indexed) == ["kernels/g.py", "ops/launch.py", "other/m3.py"]
    index.save()
    indexed.clear()
    again = TreeIndex.on_demand(root, cache, ["kernels/"])  # what was computed is cached, the rest is not
    assert again.reachability.callers("_gather_kernel", "kernels/g.py", "_gather_kernel").non_test == callers.non_test
    assert again.definitions_by_name["f3"] == expected.definitions_by_name["f3"] and indexed == []
    assert again.definitions_by_name.get("f4") == expected.definitions_by_name["f4"] and indexed == ["other/m4.py"]


def test_a_damaged_cache_of_an_on_demand_index_is_read_again_from_the_tree(tmp_path, monkeypatch):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT, "ops/launch.py": CALLER})
    expected = TreeIndex.build(root, cache, port_roots=["kernels/"])
    (cached,) = cache.glob("tree-index-*.json")
    for damage in ('{"format": 11, "rules": "other", "files": []}', "{not json", '{"format": 11}'):
        cached.write_text(damage)
        index = TreeIndex.on_demand(root, cache, ["kernels/"])
        assert _records(index) == _records(expected)


def test_questions_by_name_answer_as_the_whole_index_on_this_repository():
    """The byte prefilter loses nothing: every name of the complete index of this repository's
    own tree (kernels, tests, portq itself) gets the same definitions and call sites on demand."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    whole = TreeIndex.build(root, None, ["kernels/"])
    sites = dict(whole.reachability.sites_by_callee.items())
    definitions = dict(whole.definitions_by_name.items())
    assert len(sites) > 1000 and len(definitions) > 500
    on_demand = TreeIndex.on_demand(root, None, ["kernels/"])
    assert all(on_demand.reachability.sites_by_callee[name] == found for name, found in sites.items())
    assert all(on_demand.definitions_by_name[name] == found for name, found in definitions.items())
    assert on_demand.definitions_by_name.get("no_such_name_anywhere", []) == []


def test_anchors_naming_paths_come_in_the_tree_s_order_of_kind_and_upstream():
    index = TreeIndex.from_sources({
        "kernels/b.py": "# portq: ports vllm:csrc/a.cu::g\ndef g():\n    pass\n\n\n"
                        "# portq: ports vllm:csrc/b.cu::h\ndef h():\n    pass\n",
        "kernels/a.py": "# portq: ports vllm:csrc/b.cu::f\ndef f():\n    pass\n\n\n"
                        "# portq: ports aiter:csrc/a.cu::f\ndef f2():\n    pass\n\n\n"
                        "# portq: not-carried vllm:csrc/a.cu::k -- sibling\n",
    })
    expected = [(a.file, a.symbol) for a in index.anchors
                if a.kind == "ports" and a.upstream == "vllm" and a.path in {"csrc/a.cu", "csrc/b.cu"}]
    assert [(a.file, a.symbol) for a in index.anchors_for_path("vllm", ["csrc/b.cu", "csrc/a.cu"])] == expected
    assert len(expected) == 3
    assert [a.symbol for a in index.anchors_for_path("vllm", {"csrc/a.cu"}, "not-carried")] == ["k"]
    assert index.anchors_for_path("aiter", ["csrc/b.cu"]) == []


def test_the_anchors_of_port_files_read_for_their_anchors_alone_are_cached_for_the_same_tree(tmp_path, monkeypatch):
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _write(root, {"kernels/g.py": PORT, "kernels/h.py": PORT.replace("gather", "scatter"), "ops/launch.py": CALLER})
    expected = TreeIndex.build(root, port_roots=["kernels/"])
    parsed = []
    real_table = portq.tree.tree_index.symbol_table
    monkeypatch.setattr(portq.tree.tree_index, "symbol_table", lambda *a, **k: parsed.append(a[1]) or real_table(*a, **k))
    indexed = _counting_index_file(monkeypatch)
    index = TreeIndex.on_demand(root, cache, ["kernels/"])
    assert index.anchors == expected.anchors and sorted(parsed) == ["kernels/g.py", "kernels/h.py"] and indexed == []
    index.save()
    parsed.clear()
    again = TreeIndex.on_demand(root, cache, ["kernels/"])
    assert again.anchors == expected.anchors and parsed == [] and indexed == []  # read from the cache, not parsed
    assert _records(again.complete()) == _records(expected)  # a record is still made from the file when asked for
    (root / "kernels" / "h.py").write_text(PORT.replace("gather", "spread"))
    edited = TreeIndex.on_demand(root, cache, ["kernels/"])  # another tree: its port files are read again
    assert {a.symbol for a in edited.anchors} >= {"spread_kernel"} and "kernels/h.py" in parsed
