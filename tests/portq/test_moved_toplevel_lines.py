"""C/C++ lines outside definitions carried unchanged into another file (``moved-toplevel-lines``): a
commit that splits a file moves a ported function into a new file together with the ``#define`` it
reads, and tidies the include lines of the file it left; ``moved-definition`` follows the function,
and the ``#define`` left behind as a top-level change moved with it: cosmetic. A ``#define`` changed
on the way, or one the old file still reads, stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

DEFS = "csrc/norm/row_norm_defs.cu"
MATRIX = MATRIX_WITH_NORM.replace(f'"{SOURCE}",', f'"{SOURCE}", "{DEFS}",')
PAGE_SIZE = '''\
int pageSize(int pages)
{
    return pages * PAGE;
}
'''
BEFORE = f'''\
#include "row_norm.h"

#include <vector>

namespace norm {{

#define PAGE 64

{PAGE_SIZE}
__global__ void FillKernel(float* x, int n)
{{
    x[blockIdx.x * n + threadIdx.x] = 1.0f;
}}

}}  // namespace norm
'''
AFTER = BEFORE.replace(f"#define PAGE 64\n\n{PAGE_SIZE}\n", "").replace("#include <vector>\n\n", "")
MOVED_TO = f'#include "row_norm.h"\n\nnamespace norm {{\n\n#define PAGE 64\n\n{PAGE_SIZE}\n}}  // namespace norm\n'
STILL_READ = BEFORE.replace("#define PAGE 64\n\n", "")

PORT = {"kernels/page.cu": (
    "#define PAGE 64\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::pageSize\n"
    "int page_size(int pages)\n{\n    return pages * PAGE;\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::FillKernel\n"
    "__global__ void fill_kernel(float* x, int n)\n{\n    x[blockIdx.x * n + threadIdx.x] = 1.0f;\n}\n\n"
    "int run_page(float* x, int n)\n{\n    fill_kernel<<<1, n>>>(x, n);\n    return page_size(n);\n}\n")}


def _scan(tmp_path, after, moved_to):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: BEFORE}),
                   CommitSpec("split", files={SOURCE: after, DEFS: moved_to})], PORT, matrix=MATRIX)
    entry = verdicts[1]
    assert MATRIX != MATRIX_WITH_NORM
    return entry, next(s for s in entry.symbols if s.path == SOURCE and s.symbol == "<toplevel>")


def test_a_define_moved_with_the_function_that_reads_it_is_cosmetic(tmp_path):
    entry, lines = _scan(tmp_path, AFTER, MOVED_TO)
    assert lines.verdict == NOT_APPLICABLE and lines.justification == "cosmetic", lines.reason
    assert "moved-toplevel-lines" in lines.rules, lines.rules
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_a_define_changed_on_the_way_is_still_flagged(tmp_path):
    entry, lines = _scan(tmp_path, AFTER, MOVED_TO.replace("#define PAGE 64", "#define PAGE 128"))
    assert "moved-toplevel-lines" not in lines.rules, lines.reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_define_the_old_file_still_reads_is_still_flagged(tmp_path):
    entry, lines = _scan(tmp_path, STILL_READ, '#include "row_norm.h"\n\n#define PAGE 64\n')
    assert "moved-toplevel-lines" not in lines.rules, lines.reason
    assert lines.verdict in FLAGGED, lines.reason
