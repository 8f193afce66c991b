"""The port already calls the new function (``port-has-respelled-call``): upstream changes only which
function its call statements call, each with the same arguments (``OLD_CHECK(x.dim() == 4, "4-D");``
→ ``NEW_CHECK(x.dim() == 4, "4-D");``), and the C++ port calls the new function and never the old: it
already has the spelling upstream moves to, IN_SYNC, citing the port's call. A port that still calls the
old function, one that calls neither, a change to the arguments as well, or an old function renamed to two
new ones stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

HOST = '''\
#include "row_norm.h"

namespace norm {

torch::Tensor scaleRows(torch::Tensor const& input, torch::Tensor const& mask, float scale)
{
    OLD_CHECK(input.dim() == 4, "expected 4D tensor");
    OLD_CHECK(mask.dim() == 4, "expected 4D tensor");
    return scale_rows_cuda(input, mask, scale);
}

}  // namespace norm
'''
AFTER = HOST.replace("OLD_CHECK(", "NEW_CHECK(")
ARGUMENTS_TOO = AFTER.replace('mask.dim() == 4, "expected 4D tensor"', 'mask.dim() == 3, "expected 3D tensor"')
TWO_NEW = HOST.replace("OLD_CHECK(input", "NEW_CHECK(input").replace("OLD_CHECK(mask", "ALT_CHECK(mask")


def _port(check: str) -> dict[str, str]:
    port = (
        f"// portq: ports vllm:{SOURCE}::norm::scaleRows\n"
        "torch::Tensor masked_scale(const torch::Tensor& scores, const torch::Tensor& mask, double scale)\n{\n"
        f"    {check}(scores.dim() == 4, \"masked_scale: scores must be 4-D\");\n"
        "    return masked_scale_forward(scores, mask, scale);\n}\n\n"
        "torch::Tensor run_scale(const torch::Tensor& scores, const torch::Tensor& mask)\n{\n"
        "    return masked_scale(scores, mask, 0.5);\n}\n"
    )
    return {"kernels/scale.cpp": port}


def _host(tmp_path, after, port):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: HOST}),
                   CommitSpec("respell", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("scaleRows"))


def test_a_call_respelled_to_the_function_the_port_calls_is_in_sync(tmp_path):
    host = _host(tmp_path, AFTER, _port("NEW_CHECK"))
    assert host.verdict == IN_SYNC, host.reason
    assert "port-has-respelled-call" in host.rules, host.rules
    assert "NEW_CHECK" in host.reason and "kernels/scale.cpp" in host.reason, host.reason


def test_a_port_still_calling_the_old_function_is_flagged(tmp_path):
    host = _host(tmp_path, AFTER, _port("OLD_CHECK"))
    assert host.verdict in FLAGGED, host.reason


def test_a_port_calling_neither_is_flagged(tmp_path):
    host = _host(tmp_path, AFTER, _port("assert_that"))
    assert host.verdict in FLAGGED, host.reason


def test_arguments_changed_as_well_are_flagged(tmp_path):
    host = _host(tmp_path, ARGUMENTS_TOO, _port("NEW_CHECK"))
    assert host.verdict in FLAGGED, host.reason


def test_one_old_function_respelled_two_ways_is_flagged(tmp_path):
    host = _host(tmp_path, TWO_NEW, _port("NEW_CHECK"))
    assert host.verdict in FLAGGED, host.reason
