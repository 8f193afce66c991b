"""A macro use replaced by what the macro expands to (``macro-expanded``).

A compatibility header defines ``#define DATA_PTR data_ptr``; a host reached through another
header's ``#include`` spells ``x.DATA_PTR<float>()``. The commit deletes the header and spells
``x.data_ptr<float>()``: the preprocessor produced exactly those tokens before, so the definition
compiles to the same code. Cosmetic where the port still spells the macro, IN_SYNC where the port
already spells the expansion. A macro defined twice (``#ifdef``-dependent), defined under a
condition, or not visible through the file's includes stays flagged."""
from __future__ import annotations

from portq.core.model import IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

COMPAT = '''// compatibility spellings for older torch
#ifndef TORCH_CHECK
#define TORCH_CHECK AT_CHECK
#endif

#define DATA_PTR data_ptr
'''
SHIM = '#include <ATen/ATen.h>\n#include "compat.h"\n'
SHIM_AFTER = '#include <ATen/ATen.h>\n'
HOST = '''#include "shim.h"

void host_norm(at::Tensor* out, at::Tensor* x, int n) {
  norm_kernel<<<n, 256>>>(out->{spell}<float>(), x->{spell}<float>(), n);
}
'''


def _tree(spell: str) -> dict[str, str]:
    port = ('#include "shim.h"\n\n'
            "// portq: ports vllm:csrc/attn/norm.cu::host_norm\n"
            "void norm_host(at::Tensor* y, at::Tensor* src, int count) {\n"
            f"  norm_kernel<<<count, 256>>>(y->{spell}<float>(), src->{spell}<float>(), count);\n"
            "}\n")
    return {"kernels/attn/norm.cu": port,
            "kernels/attn/ops.cu": '#include "norm.cu"\n\nvoid engine(at::Tensor* o, at::Tensor* i, int n) '
                                   '{ norm_host(o, i, n); }\n'}


def _expanded(tmp_path, port_spell="DATA_PTR", compat=COMPAT, after_spell="data_ptr", shim=SHIM):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/attn/compat.h": compat, "csrc/attn/shim.h": shim,
                                  "csrc/attn/norm.cu": HOST.replace("{spell}", "DATA_PTR")}),
        CommitSpec("spell it out", files={"csrc/attn/compat.h": None, "csrc/attn/shim.h": SHIM_AFTER,
                                          "csrc/attn/norm.cu": HOST.replace("{spell}", after_spell)})],
        _tree(port_spell))
    return verdicts[1]


def _host(verdict):
    return next(s for s in verdict.symbols if s.symbol == "host_norm")


def test_a_macro_replaced_by_its_expansion_is_cosmetic_for_a_port_that_spells_the_macro(tmp_path):
    verdict = _expanded(tmp_path)
    host = _host(verdict)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "cosmetic"), host.reason
    assert "macro-expanded" in host.rules, host.rules
    assert "DATA_PTR" in host.reason, host.reason


def test_a_port_that_already_spells_the_expansion_is_in_sync(tmp_path):
    host = _host(_expanded(tmp_path, port_spell="data_ptr"))
    assert host.verdict == IN_SYNC, host.reason
    assert "macro-expanded" in host.rules, host.rules


def test_a_macro_defined_differently_under_a_condition_stays_flagged(tmp_path):
    compat = COMPAT + "#ifdef OLD_TORCH\n#define DATA_PTR data\n#endif\n"
    host = _host(_expanded(tmp_path, compat=compat))
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "macro-expanded" not in host.rules


def test_a_macro_defined_only_under_a_condition_stays_flagged(tmp_path):
    compat = "#ifdef OLD_TORCH\n#define DATA_PTR data\n#else\n#define DATA_PTR data_ptr\n#endif\n"
    host = _host(_expanded(tmp_path, compat=compat))
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "macro-expanded" not in host.rules


def test_a_different_spelling_than_the_expansion_stays_flagged(tmp_path):
    host = _host(_expanded(tmp_path, after_spell="const_data_ptr"))
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "macro-expanded" not in host.rules


def test_a_macro_the_file_does_not_include_stays_flagged(tmp_path):
    host = _host(_expanded(tmp_path, shim='#include <ATen/ATen.h>\n'))
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "macro-expanded" not in host.rules
