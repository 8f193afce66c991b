"""Symbol tables: which definitions a C++/CUDA or Python file has, and their lines."""
from __future__ import annotations

from portq.symbols import KIND_CLASS, KIND_DEVICE_FUNCTION, KIND_METHOD, symbol_table

CUDA = b"""\
namespace vllm {
// A page task.
struct GatherPageTask {
  int32_t req_id;
  int32_t logical_block;
  int32_t first() const { return logical_block; }
};

template <int N>
struct Tiled {
  int rows[N];
};

typedef struct {
  int x;
} Pair;

struct Forward;

__device__ bool map_gather_page_task(int32_t task, GatherPageTask* out) {
  out->req_id = task;
  return true;
}
}  // namespace vllm
"""


def _definitions():
    return {d.qualified_name: d for d in symbol_table(CUDA, "a.cu").definitions}


def test_namespace_level_struct_is_a_class_definition_over_its_lines():
    struct = _definitions()["vllm::GatherPageTask"]
    assert (struct.kind, struct.start_line, struct.end_line) == (KIND_CLASS, 3, 7)


def test_struct_members_are_qualified_by_the_struct():
    method = _definitions()["vllm::GatherPageTask::first"]
    assert method.kind == KIND_METHOD


def test_a_field_line_maps_to_its_struct_not_to_the_top_level():
    table = symbol_table(CUDA, "a.cu")
    assert table.enclosing(5).qualified_name == "vllm::GatherPageTask"


def test_template_struct_spans_its_template_line_and_typedef_struct_takes_its_alias():
    definitions = _definitions()
    assert (definitions["vllm::Tiled"].start_line, definitions["vllm::Tiled"].end_line) == (9, 12)
    assert definitions["vllm::Pair"].kind == KIND_CLASS


def test_forward_declaration_is_not_a_definition():
    assert "vllm::Forward" not in _definitions()


def test_functions_next_to_structs_keep_their_kind():
    assert _definitions()["vllm::map_gather_page_task"].kind == KIND_DEVICE_FUNCTION
