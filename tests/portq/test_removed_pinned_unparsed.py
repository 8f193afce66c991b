"""Deleted pinned copies past what tree-sitter cannot read (docs/tricky-cases.md,
"a deleted instantiation list tree-sitter cannot read" and "a class deleted with
its pinned members"): ``removed-pinned-unparsed`` and ``removed-pinned-class``.

A commit that only deletes definitions a vendored copy pins, which nothing in
the tree's non-test code reaches, leaves the copy behind on code no caller
runs: INERT (``removed-pinned-definition``). Two readings kept that from
holding for the lines outside the deleted definitions:

* an explicit-instantiation list written as macro calls without semicolons
  is a parse error on the old side; when every deleted line beside the error
  stands, among what ported definitions use, only for the deleted copies, the
  unparsed text goes with them (``removed-pinned-unparsed``);
* a class deleted whole with its pinned constructor shares words (a member
  name another class also declares) with kept definitions; deleting a class
  removes only what it declares, so when nothing else names the class it is
  INERT too (``removed-pinned-class``).

The neighbours stay flagged: a deleted copy the engine reaches, an error beside
lines that stand for a kept definition, a class the tree names elsewhere.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import INERT, NEEDS_REVIEW
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

KERNELS = "csrc/ops/scale.cu"

DUMP = '''template <typename T> __device__ void dump(T* a, int n) {
    for (int i = 0; i < n; i++) { a[i] = a[i] + 1; }
}

'''

HEAD = '''#include <cuda_runtime.h>

''' + DUMP + '''template <typename T> __global__ void scale_kernel(T* x, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

#define MAKE_SCALE(T) template __global__ void scale_kernel<T>(T* x, T s, int n);
#define MAKE_DUMP(T) template __device__ void dump<T>(T* a, int n);

MAKE_SCALE(float)
MAKE_SCALE(double)
'''

INSTANTIATIONS = '''MAKE_DUMP(float)
MAKE_DUMP(double)
'''

BEFORE = HEAD + INSTANTIATIONS
AFTER = HEAD.replace(DUMP, "").replace("#define MAKE_DUMP(T) template __device__ void dump<T>(T* a, int n);\n", "")

ENGINE = ('#include "scale.cu"\n\nvoid scale(float* x, float s, int n) '
          '{ scale_kernel<float><<<(n + 255) / 256, 256>>>(x, s, n); }\n')


def _pinned(text: str, names: dict[str, str], pin: str | None) -> str:
    """``text`` with ``// portq: ports`` pins above each definition head in ``names`` (qualified name -> head)."""
    at = f" @{pin}" if pin else ""
    for qualified, head in names.items():
        text = text.replace(head, f"// portq: ports vllm:{KERNELS}::{qualified}{at}\n" + head, 1)
    return text


def _scan(tmp_path, before: str, after: str, names: dict[str, str], extra=None):
    commits = [CommitSpec("base", files={KERNELS: before}), CommitSpec("cleanup", files={KERNELS: after})]
    _, shas = classify_history(tmp_path / "first", commits, {"kernels/ops/scale.cu": _pinned(before, names, None)})
    tree = {"kernels/ops/scale.cu": _pinned(before, names, shas[0][:10]), "kernels/ops/engine.cu": ENGINE,
            **(extra or {})}
    verdicts, _ = classify_history(tmp_path / "second", commits, tree)
    return verdicts[1]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


KERNEL_PINS = {"dump": "template <typename T> __device__ void dump(",
               "scale_kernel": "template <typename T> __global__ void scale_kernel("}


def test_a_deleted_instantiation_list_tree_sitter_cannot_read_goes_with_the_deleted_pinned_copy(tmp_path):
    verdict = _scan(tmp_path, BEFORE, AFTER, KERNEL_PINS,
                    {"tests/ops/test_dump.cu": '#include "../../kernels/ops/scale.cu"\n\n'
                                               'void test_dump(float* a) { dump<float>(a, 4); }\n'})
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == INERT, toplevel.reason
    assert "removed-pinned-unparsed" in toplevel.rules and "removed-pinned-definition" in toplevel.rules
    assert verdict.verdict == INERT, verdict.reason


def test_the_same_deletion_with_a_copy_the_engine_reaches_stays_flagged(tmp_path):
    engine = {"kernels/ops/debug.cu": '#include "scale.cu"\n\nvoid debug(float* a) { dump<float>(a, 4); }\n'}
    verdict = _scan(tmp_path, BEFORE, AFTER, KERNEL_PINS, engine)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == NEEDS_REVIEW, toplevel.reason
    assert "removed-pinned-unparsed" not in toplevel.rules
    assert verdict.verdict == NEEDS_REVIEW


def test_an_unreadable_deleted_line_that_stands_for_a_kept_definition_stays_a_parse_failure(tmp_path):
    before = BEFORE + "MAKE_SCALE(int)\n"
    verdict = _scan(tmp_path, before, AFTER, KERNEL_PINS)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == NEEDS_REVIEW, toplevel.reason
    assert "parse-failure" in toplevel.rules and "removed-pinned-unparsed" not in toplevel.rules


HANDLES = '''#include <cuda_runtime.h>

class Context
{
    public:
        lib_handle_t m_handle;

        Context()
        {
            lib_create(&m_handle);
        }
};

'''

SPARSE = '''class SparseContext
{
    public:
        lib_handle_t m_handle;

        SparseContext()
        {
            lib_sparse_create(&m_handle);
        }
};

'''

HANDLE_PINS = {"Context::Context": "        Context()\n", "SparseContext::SparseContext": "        SparseContext()\n"}

HANDLE_ENGINE = '#include "scale.cu"\n\nvoid run() { Context c; }\n'


def _handles(tmp_path, extra=None):
    return _scan(tmp_path, HANDLES + SPARSE, HANDLES, HANDLE_PINS,
                 {"kernels/ops/engine.cu": HANDLE_ENGINE, **(extra or {})})


def test_a_class_deleted_whole_with_its_unreached_pinned_constructor_is_inert(tmp_path):
    verdict = _handles(tmp_path)
    sparse = next(s for s in verdict.symbols if s.symbol == "SparseContext" and "removed-pinned-class" in s.rules)
    assert sparse.verdict == INERT, sparse.reason
    assert verdict.verdict == INERT, verdict.reason


def test_a_deleted_class_the_tree_names_elsewhere_stays_flagged(tmp_path):
    verdict = _handles(tmp_path, {"kernels/ops/sparse.cu": '#include "scale.cu"\n\nvoid keep(SparseContext* c);\n'})
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert not any("removed-pinned-class" in s.rules for s in verdict.symbols)


# A formatter wraps a run of instantiation macro calls without semicolons as one expression, so a call's
# arguments and its closing parenthesis fall on other lines than its name, and each line reads as a bare
# list of words: the operation codes it passes are words a kept kernel reads too.
OPS = '''#include <cuda_runtime.h>

enum Op { ADD = 0, MUL = 1 };
typedef float f32;

''' + '''template <typename T, int OP> __device__ void dump(T* a, int n) {
    for (int i = 0; i < n; i++) { a[i] = a[i] + 1; }
}

''' + '''template <typename T, int OP> __global__ void apply_kernel(T* x, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = OP == ADD ? x[i] + s : x[i] * s;
}

#define MAKE_APPLY(T, OP) template __global__ void apply_kernel<T, OP>(T* x, T s, int n);
#define MAKE_DUMP(T, OP) template __device__ void dump<T, OP>(T* a, int n);

MAKE_APPLY(f32, ADD);
MAKE_APPLY(f32, MUL);
'''

WRAPPED_DUMPS = '''MAKE_DUMP(float, ADD) MAKE_DUMP(double, ADD) MAKE_DUMP(
    float, MUL
) MAKE_DUMP(double, MUL)
'''

OPS_AFTER = OPS.replace('''template <typename T, int OP> __device__ void dump(T* a, int n) {
    for (int i = 0; i < n; i++) { a[i] = a[i] + 1; }
}

''', "").replace("#define MAKE_DUMP(T, OP) template __device__ void dump<T, OP>(T* a, int n);\n", "")

OPS_PINS = {"dump": "template <typename T, int OP> __device__ void dump(",
            "apply_kernel": "template <typename T, int OP> __global__ void apply_kernel("}

OPS_ENGINE = ('#include "scale.cu"\n\nvoid apply(float* x, float s, int n) '
              '{ apply_kernel<float, ADD><<<(n + 255) / 256, 256>>>(x, s, n); }\n')

OPS_TEST = {"kernels/ops/engine.cu": OPS_ENGINE,
            "tests/ops/test_dump.cu": '#include "../../kernels/ops/scale.cu"\n\n'
                                      'void test_dump(float* a) { dump<float, ADD>(a, 4); }\n'}


def test_a_deleted_instantiation_list_wrapped_over_lines_goes_with_the_deleted_pinned_copy(tmp_path):
    verdict = _scan(tmp_path, OPS + WRAPPED_DUMPS, OPS_AFTER, OPS_PINS, OPS_TEST)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == INERT, toplevel.reason
    assert "removed-pinned-unparsed" in toplevel.rules and "removed-pinned-definition" in toplevel.rules
    assert verdict.verdict == INERT, verdict.reason


def test_a_wrapped_deleted_list_that_also_instantiates_a_kept_definition_stays_a_parse_failure(tmp_path):
    wrapped = WRAPPED_DUMPS.replace(") MAKE_DUMP(double, MUL)", ") MAKE_DUMP(double, MUL) MAKE_APPLY(\n    double, ADD\n)")
    verdict = _scan(tmp_path, OPS + wrapped, OPS_AFTER, OPS_PINS, OPS_TEST)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == NEEDS_REVIEW, toplevel.reason
    assert "removed-pinned-unparsed" not in toplevel.rules


def test_a_kept_instantiation_line_only_reindented_beside_the_deleted_list_changes_nothing(tmp_path):
    before = OPS.replace("MAKE_APPLY(f32, ADD);\n", "        MAKE_APPLY(f32, ADD);\n") + WRAPPED_DUMPS
    verdict = _scan(tmp_path, before, OPS_AFTER, OPS_PINS, OPS_TEST)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == INERT, toplevel.reason
    assert "removed-pinned-unparsed" in toplevel.rules
    assert verdict.verdict == INERT, verdict.reason


def test_a_kept_instantiation_line_reindented_with_another_argument_stays_flagged(tmp_path):
    before = OPS.replace("MAKE_APPLY(f32, ADD);\n", "        MAKE_APPLY(f32, MUL);\n") + WRAPPED_DUMPS
    verdict = _scan(tmp_path, before, OPS_AFTER, OPS_PINS, OPS_TEST)
    toplevel = _symbol(verdict, "<toplevel>")
    assert toplevel.verdict == NEEDS_REVIEW, toplevel.reason
    assert "removed-pinned-unparsed" not in toplevel.rules
