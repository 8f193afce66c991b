"""Lines inside a C++ block comment are comments wherever they start (rule ``cosmetic-comments``): a
``/* ... */`` note above a new sibling whose inner lines name what a ported definition uses (``dims``,
``num``) names nothing, so it is no module-level use of anything the port reads. A changed line of code
outside the comment, naming the same words, stays flagged (``toplevel-use``).

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_declared_sibling import BEFORE_HEADER, BEFORE_SOURCE, HEADER, MATRIX_WITH_NORM, SOURCE, _tree

NOTE = '''
/*
Blocks for a residual norm:
    dims columns per row, num rows,
    the same blocks as the plain norm
*/
inline int residualBlocks(int width, int rows)
{
    return rows * ((width + 127) / 128);
}
'''


def _one_commit(tmp_path, header):
    return classify_commit(tmp_path, {HEADER: BEFORE_HEADER, SOURCE: BEFORE_SOURCE}, {HEADER: header}, _tree(),
                           matrix=MATRIX_WITH_NORM, message="sibling")


def test_a_block_comment_above_an_unported_sibling_names_nothing(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE_HEADER.replace("\n}  // namespace norm", NOTE + "\n}  // namespace norm"))
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert "toplevel-use" not in verdict.rules, verdict.rules


def test_code_outside_the_comment_naming_the_same_words_is_still_flagged(tmp_path):
    code = NOTE.replace("*/\n", "*/\nconstexpr int dims = 128;\n")
    verdict = _one_commit(tmp_path, BEFORE_HEADER.replace("\n}  // namespace norm", code + "\n}  // namespace norm"))
    assert verdict.verdict in FLAGGED, verdict.reason
