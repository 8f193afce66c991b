"""Anchors: the three forms, and which definition each belongs to."""
from __future__ import annotations

from portq.language.symbols import symbol_table
from portq.tree.anchors import find_anchors

PYTHON = '''\
"""Gathers.

portq: not-carried vllm:csrc/cache_kernels.cu::cp_gather_cache -- fp8/DCP sibling
"""


# portq: ports vllm:csrc/cache_kernels.cu::vllm::gather_kernel @c76a425278
@triton.jit
def _gather_kernel(x_ptr):
    pass


def gather(x):
    """Host wrapper.

    portq: ports vllm:csrc/cache_kernels.cu::gather
    """
    # portq: not-carried vllm:csrc/cache_kernels.cu::gather[token_to_seq] -- dead upstream
    return x


# portq: ports vllm:csrc/cache_kernels.cu::orphan

x = 1
PATTERN = "portq: ports vllm:a.cu::not_an_anchor"
'''

CPP = b"""\
// Ported 1:1 from vllm/csrc/libtorch_stable/cache_kernels.cu:992-1064
// (`vllm::gather_and_maybe_dequant_cache`) + its host wrapper `:1099-1157`
void GatherMlaCache(const int32_t* token_to_seq);
"""


def _anchors(source, path):
    data = source.encode() if isinstance(source, str) else source
    return find_anchors(symbol_table(data, path), path)


def test_ports_anchor_directly_above_a_decorated_kernel_with_a_pin():
    anchor = next(a for a in _anchors(PYTHON, "g.py") if a.symbol == "vllm::gather_kernel")
    assert (anchor.kind, anchor.definition, anchor.pin, anchor.line) == ("ports", "_gather_kernel", "c76a425278", 7)
    assert anchor.qualified and anchor.bare_symbol == "gather_kernel"


def test_docstring_anchor_inside_a_definition_belongs_to_it():
    anchor = next(a for a in _anchors(PYTHON, "g.py") if a.kind == "ports" and a.symbol == "gather")
    assert anchor.definition == "gather" and anchor.path == "csrc/cache_kernels.cu"


def test_not_carried_with_param_and_reason():
    anchor = next(a for a in _anchors(PYTHON, "g.py") if a.param)
    assert (anchor.kind, anchor.param, anchor.reason) == ("not-carried", "token_to_seq", "dead upstream")


def test_module_level_not_carried_declaration_has_no_definition():
    anchor = next(a for a in _anchors(PYTHON, "g.py") if a.symbol == "cp_gather_cache")
    assert anchor.definition is None and anchor.reason == "fp8/DCP sibling"


def test_blank_line_breaks_directly_above():
    anchor = next(a for a in _anchors(PYTHON, "g.py") if a.symbol == "orphan")
    assert anchor.definition is None


def test_string_literals_are_not_anchors():
    assert not any(a.symbol == "not_an_anchor" for a in _anchors(PYTHON, "g.py"))


def test_free_form_cpp_anchor_spanning_two_lines_names_the_prototype():
    (anchor,) = _anchors(CPP, "ops.h")
    assert (anchor.upstream, anchor.path, anchor.symbol) == ("vllm", "csrc/libtorch_stable/cache_kernels.cu",
                                                            "gather_and_maybe_dequant_cache")
    assert anchor.style == "free-form" and anchor.upstream_lines == (992, 1064)
    assert anchor.declared_name == "GatherMlaCache"


def test_bare_anchor_matches_every_same_named_definition_qualified_only_one():
    bare = next(a for a in _anchors(PYTHON, "g.py") if a.kind == "ports" and a.symbol == "gather")
    qualified = next(a for a in _anchors(PYTHON, "g.py") if a.symbol == "vllm::gather_kernel")
    assert bare.matches_name("gather", "gather") and bare.matches_name("gather", "vllm::gather")
    assert qualified.matches_name("gather_kernel", "vllm::gather_kernel")
    assert not qualified.matches_name("gather_kernel", "gather_kernel")


SPECIALISED = b"""\
template <typename T> struct Gelu;
template <> struct Gelu<half2> {
  // portq: ports up:act.cu::Gelu<half2>::apply @0123abcd
  static __device__ half2 apply(half2 x) { return x; }
};
template <> struct Vec<half, 2> {
  // portq: ports up:vec.h::Vec<half, 2>::get @4567ef01
  __device__ half get(int i) const { return v[i]; }
  half v[2];
};
struct Less {
  // portq: ports up:sort.cu::Less::operator() @89abcdef
  __device__ bool operator()(int a, int b) const { return a < b; }
};
"""


ANONYMOUS = b"""\
namespace te {
namespace {
// portq: ports up:vec.h::te::<anonymous>::aligned_count @0123abcd
inline int aligned_count(const void* p, int n) { return n; }
}  // namespace
}  // namespace te
"""


def test_anchor_names_a_definition_of_an_anonymous_namespace_with_its_pin():
    # the symbol table names such a definition ``te::<anonymous>::aligned_count``; an anchor written
    # from it (a vendored copy's pin, ``portq init``) must read back with its pin, not be lost
    table = symbol_table(ANONYMOUS, "vec.h")
    assert [d.qualified_name for d in table.definitions] == ["te::<anonymous>::aligned_count"]
    (anchor,) = _anchors(ANONYMOUS, "vec.h")
    assert (anchor.symbol, anchor.pin) == ("te::<anonymous>::aligned_count", "0123abcd")
    assert anchor.definition == "te::<anonymous>::aligned_count"
    assert anchor.matches_name("aligned_count", "te::<anonymous>::aligned_count")
    assert not anchor.matches_name("aligned_count", "te::aligned_count")


def test_anchor_names_a_specialisation_member_and_an_operator_with_their_pins():
    anchors = {a.symbol: a for a in _anchors(SPECIALISED, "ops.cu")}
    assert set(anchors) == {"Gelu<half2>::apply", "Vec<half, 2>::get", "Less::operator()"}
    assert [anchors[s].pin for s in sorted(anchors)] == ["0123abcd", "89abcdef", "4567ef01"]
    assert anchors["Gelu<half2>::apply"].definition == "Gelu<half2>::apply"
    assert anchors["Less::operator()"].bare_symbol == "operator()"
    assert anchors["Less::operator()"].matches_name("operator()", "Less::operator()")
    assert not anchors["Gelu<half2>::apply"].matches_name("apply", "Gelu::apply")
