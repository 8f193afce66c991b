"""The in-tree index: ports by upstream symbol, not-carried declarations, the cache."""
from __future__ import annotations

from portq.tree_index import TreeIndex

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
