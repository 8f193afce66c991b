"""A binding's device guard respelled (``equivalent-device-guard``) and includes chosen by a version
test (``conditional-includes``).

``at::cuda::CUDAGuard g{(char)x.get_device()}`` and ``at::cuda::CUDAGuard g{x.device()}`` set the
current device to ``x``'s once the binding has checked ``x.is_cuda()``: cosmetic, for a copy and a
re-implementation alike. A torch-version ``#if`` choosing ``c10::DeviceGuard`` over ``CUDAGuard`` sets
the same device in every build; a port in another language has no C++ build, so it is cosmetic
there, while a copy of the C++ code must still compile against the newer torch and stays flagged.
A guard on a tensor not checked to be CUDA, or on another tensor, stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

TOP = '#include <torch/extension.h>\n#include <c10/cuda/CUDAGuard.h>\n\n'
TOP_VERSIONED = ('#include <torch/extension.h>\n#if TORCH_VERSION_MAJOR > 2\n#include <c10/core/DeviceGuard.h>\n'
                 '#else\n#include <c10/cuda/CUDAGuard.h>\n#endif\n\n')
BINDING = '''at::Tensor norm_fwd(const at::Tensor &x, const at::Tensor &w) {
    {check}
    at::Tensor out = torch::empty_like(x);
{guard}
    norm_cuda(x, w, out);
    return out;
}
'''
OLD_GUARD = "    at::cuda::CUDAGuard device_guard{(char)x.get_device()};"
NEW_GUARD = "    at::cuda::CUDAGuard device_guard{x.device()};"
VERSIONED = ("#if TORCH_VERSION_MAJOR > 2\n    c10::Device device = x.device();\n    c10::DeviceGuard device_guard(device);\n"
             "#else\n    at::cuda::CUDAGuard device_guard{x.device()};\n#endif")

COPY = '''#include <torch/extension.h>
// portq: ports vllm:csrc/norm/binding.cpp::norm_fwd @{base}
at::Tensor norm_fwd(const at::Tensor &x, const at::Tensor &w) {
    TORCH_CHECK(x.is_cuda());
    at::Tensor out = torch::empty_like(x);
    at::cuda::CUDAGuard device_guard{(char)x.get_device()};
    norm_cuda(x, w, out);
    return out;
}
void engine(const at::Tensor &x, const at::Tensor &w) { norm_fwd(x, w); }
'''
REIMPL = {"kernels/norm.py": "# portq: ports vllm:csrc/norm/binding.cpp::norm_fwd\n"
                             "def fwd(x, w):\n    return x * w\n\n\ndef engine(x, w):\n    return fwd(x, w)\n"}


def _guarded(tmp_path, new_guard=NEW_GUARD, check="TORCH_CHECK(x.is_cuda());", tree=None, top=TOP):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/norm/binding.cpp": TOP + BINDING.replace("{check}", check)
                                  .replace("{guard}", OLD_GUARD)}),
        CommitSpec("guard", files={"csrc/norm/binding.cpp": top + BINDING.replace("{check}", check)
                                   .replace("{guard}", new_guard)})],
        tree if tree is not None else {"kernels/norm.cpp": COPY.replace(" @{base}", "")})
    return verdicts[1]


def _binding(verdict):
    return next(s for s in verdict.symbols if s.symbol == "norm_fwd")


def test_a_guard_built_from_the_device_instead_of_its_index_is_cosmetic(tmp_path):
    binding = _binding(_guarded(tmp_path))
    assert (binding.verdict, binding.justification) == (NOT_APPLICABLE, "cosmetic"), binding.reason
    assert "equivalent-device-guard" in binding.rules, binding.rules


def test_a_guard_on_a_tensor_not_checked_to_be_cuda_stays_flagged(tmp_path):
    binding = _binding(_guarded(tmp_path, check="TORCH_CHECK(w.is_cuda());"))
    assert binding.verdict == NEEDS_REVIEW, binding.reason
    assert "equivalent-device-guard" not in binding.rules


def test_a_guard_on_another_tensor_stays_flagged(tmp_path):
    binding = _binding(_guarded(tmp_path, new_guard=NEW_GUARD.replace("x.device", "w.device")))
    assert binding.verdict == NEEDS_REVIEW, binding.reason


def test_a_version_test_choosing_the_guard_is_cosmetic_for_a_port_in_another_language(tmp_path):
    verdict = _guarded(tmp_path, new_guard=VERSIONED, tree=REIMPL, top=TOP_VERSIONED)
    binding = _binding(verdict)
    assert (binding.verdict, binding.justification) == (NOT_APPLICABLE, "cosmetic"), binding.reason
    assert "equivalent-device-guard" in binding.rules, binding.rules
    top = next(s for s in verdict.symbols if s.symbol == "<toplevel>")
    assert (top.verdict, top.justification) == (NOT_APPLICABLE, "cosmetic"), top.reason
    assert "conditional-includes" in top.rules, top.rules


def test_a_version_test_choosing_the_guard_stays_flagged_for_a_copy_of_the_cpp_code(tmp_path):
    binding = _binding(_guarded(tmp_path, new_guard=VERSIONED, top=TOP_VERSIONED))
    assert binding.verdict == NEEDS_REVIEW, binding.reason
    assert "equivalent-device-guard" not in binding.rules


def test_a_version_test_around_code_is_no_conditional_include(tmp_path):
    top = TOP_VERSIONED.replace("#else\n", "static int newer = 1;\n#else\n")
    verdict = _guarded(tmp_path, new_guard=VERSIONED, tree=REIMPL, top=top)
    toplevel = next(s for s in verdict.symbols if s.symbol == "<toplevel>")
    assert "conditional-includes" not in toplevel.rules
