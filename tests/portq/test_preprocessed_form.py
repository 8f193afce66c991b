"""C/C++ text the compiler reads as the same tokens (``alternative-tokens``,
``default-build-macro-call``, ``new-macro-lines``).

A commit for another compiler spells ``and`` as ``&&`` in a host's checks; the standard
makes them one token, so the host is the same program. The same commit folds a launcher's
``#ifndef USE_GPU_B`` ... ``#else`` ... ``#endif`` into a function-like macro that expands to
nothing in the default build (``GPU_B_ONLY((void *)) kernel``, which tree-sitter cannot parse)
and defines that macro at the top of the file: the default build compiles the launcher's
old tokens. A respelling that changes an operator, a macro that expands to something else in
the default build, a flag the tree sets, or a top-level line other than a new macro's
``#define`` stays flagged."""
from __future__ import annotations

from portq.classifier.rules.preprocessed import expand_calls, default_build_function_macros
from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

HOST = '''#include <torch/extension.h>

void host_norm(at::Tensor x, at::Tensor out, bool last) {
  if (last) {
    TORCH_CHECK(x.stride(2) % 8 == 0 {op} x.stride(0) % 8 == 0, "strides must be multiples of 8 and aligned");
  }
  norm_launch(x, out);
}
'''

PORT_HOST = '''#include <torch/extension.h>

// portq: ports vllm:csrc/norm/host.cpp::host_norm
void norm_host(at::Tensor x, at::Tensor out, bool last) {
  if (last) {
    TORCH_CHECK(x.stride(2) % 8 == 0 and x.stride(0) % 8 == 0, "strides must be multiples of 8 and aligned");
  }
  norm_launch(x, out);
}

void engine(at::Tensor x, at::Tensor out) { norm_host(x, out, false); }
'''

LAUNCH_TOP = '''#include <cuda_runtime.h>
#ifndef USE_GPU_B
    #include <cub/block/block_load.cuh>
{cuda_define}#else
    #include <gpub/cub.hpp>
{other_define}#endif

'''

LAUNCH_OLD = '''template <int N>
__global__ void norm_kernel(float* x, int n) { x[threadIdx.x] *= 2.f; }

void norm_launch(float* x, int n, int smem) {
    auto kernel = &norm_kernel<4>;
    if (smem >= 48 * 1024) {
        #ifndef USE_GPU_B
        CHECK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        #else
        // the other build's attribute call takes a void pointer
        CHECK(cudaFuncSetAttribute(
            (void *) kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        std::cerr << "Warning: a no-op on this build" << std::endl;
        #endif
    }
    kernel<<<n, 256, smem>>>(x, n);
}
'''

LAUNCH_NEW = '''template <int N>
__global__ void norm_kernel(float* x, int n) { x[threadIdx.x] *= 2.f; }

void norm_launch(float* x, int n, int smem) {
    auto kernel = &norm_kernel<4>;
    if (smem >= 48 * 1024) {
        // the other build's attribute call takes a void pointer
        CHECK(cudaFuncSetAttribute(
            GPU_B_ONLY((void *)) kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        GPU_B_ONLY(std::cerr << "Warning: a no-op on this build" << std::endl);
    }
    kernel<<<n, 256, smem>>>(x, n);
}
'''

PORT_LAUNCH = '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/norm/launch.cu::norm_kernel
template <int N>
__global__ void kernel_norm(float* x, int n) { x[threadIdx.x] *= 2.f; }

// portq: ports vllm:csrc/norm/launch.cu::norm_launch
void launch_norm(float* x, int n, int smem) {
    auto kernel = &kernel_norm<4>;
    if (smem >= 48 * 1024) {
        CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    }
    kernel<<<n, 256, smem>>>(x, n);
}

void run(float* x, int n) { launch_norm(x, n, 0); }
'''

CUDA_DEFINE = "    #define GPU_B_ONLY(x)\n"
OTHER_DEFINE = "    #define GPU_B_ONLY(x) x\n"


def _history(tmp_path, op="&&", cuda_define=CUDA_DEFINE, other_define=OTHER_DEFINE, launch_new=LAUNCH_NEW,
             tree_extra=None):
    top_old = LAUNCH_TOP.replace("{cuda_define}", "").replace("{other_define}", "")
    top_new = LAUNCH_TOP.replace("{cuda_define}", cuda_define).replace("{other_define}", other_define)
    tree = {"kernels/norm/host.cpp": PORT_HOST, "kernels/norm/launch.cu": PORT_LAUNCH, **(tree_extra or {})}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/norm/host.cpp": HOST.replace("{op}", "and"),
                                  "csrc/norm/launch.cu": top_old + LAUNCH_OLD}),
        CommitSpec("support another compiler", files={"csrc/norm/host.cpp": HOST.replace("{op}", op),
                                                      "csrc/norm/launch.cu": top_new + launch_new})],
        tree)
    return verdicts[1]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_and_spelled_as_the_primary_token_is_cosmetic(tmp_path):
    verdict = _history(tmp_path)
    host = _symbol(verdict, "host_norm")
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "cosmetic"), host.reason
    assert "alternative-tokens" in host.rules, host.rules
    assert "`and` as `&&`" in host.reason, host.reason


def test_a_respelling_that_changes_the_operator_stays_flagged(tmp_path):
    host = _symbol(_history(tmp_path, op="||"), "host_norm")
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "alternative-tokens" not in host.rules


def test_a_conditional_folded_into_a_default_build_empty_macro_is_cosmetic_despite_the_parse(tmp_path):
    verdict = _history(tmp_path)
    launch = _symbol(verdict, "norm_launch")
    assert (launch.verdict, launch.justification) == (NOT_APPLICABLE, "cosmetic"), launch.reason
    assert "default-build-macro-call" in launch.rules, launch.rules
    assert "GPU_B_ONLY" in launch.reason and "parse failed" in launch.reason, launch.reason
    top = _symbol(verdict, "<toplevel>")
    assert (top.verdict, top.justification) == (NOT_APPLICABLE, "cosmetic"), top.reason
    assert "new-macro-lines" in top.rules, top.rules
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason


def test_a_macro_that_keeps_its_argument_in_the_default_build_stays_flagged(tmp_path):
    # swapped: the default build now casts and warns, which it did not before
    verdict = _history(tmp_path, cuda_define=OTHER_DEFINE, other_define=CUDA_DEFINE)
    launch = _symbol(verdict, "norm_launch")
    assert launch.verdict == NEEDS_REVIEW, launch.reason
    assert "default-build-macro-call" not in launch.rules


def test_a_flag_the_tree_sets_stays_flagged(tmp_path):
    verdict = _history(tmp_path, tree_extra={"setup.py": "flags = ['-DUSE_GPU_B']\n"})
    launch = _symbol(verdict, "norm_launch")
    assert launch.verdict == NEEDS_REVIEW, launch.reason
    assert "default-build-macro-call" not in launch.rules


def test_a_macro_defined_only_under_an_undecided_condition_stays_flagged(tmp_path):
    verdict = _history(tmp_path, cuda_define="", other_define="",
                       launch_new="#if GPU_B_VERSION > 6\n#define GPU_B_ONLY(x)\n#endif\n" + LAUNCH_NEW)
    launch = _symbol(verdict, "norm_launch")
    assert launch.verdict == NEEDS_REVIEW, launch.reason
    assert "default-build-macro-call" not in launch.rules


def test_a_top_level_line_other_than_a_new_macro_stays_flagged(tmp_path):
    verdict = _history(tmp_path, cuda_define=CUDA_DEFINE + "    #define CHECK(x) x\n")
    top = _symbol(verdict, "<toplevel>")
    assert top.verdict == NEEDS_REVIEW, top.reason
    assert "new-macro-lines" not in top.rules


def test_expansion_reads_arguments_and_drops_only_statement_level_empty_calls():
    macros, flags = default_build_function_macros(
        [b"#ifndef USE_B\n#define ONLY_B(x)\n#define TWICE(a, b) a + b\n#else\n#define ONLY_B(x) x\n#endif\n"],
        set())
    assert flags == {"USE_B"}
    assert macros["ONLY_B"] == (["x"], [])
    assert expand_calls(["{", "ONLY_B", "(", "f", "(", "a", ",", "b", ")", ")", ";", "}"], macros) == (["{", "}"],
                                                                                                         ["ONLY_B"])
    # after ``if (c)`` the empty statement is the if's body: kept
    assert expand_calls(["if", "(", "c", ")", "ONLY_B", "(", "x", ")", ";", "g", "(", ")", ";"], macros)[0] == \
        ["if", "(", "c", ")", ";", "g", "(", ")", ";"]
    assert expand_calls(["TWICE", "(", "p", ",", "q", ")"], macros)[0] == ["p", "+", "q"]
    assert expand_calls(["TWICE", "(", "p", ")"], macros) is None


KERNEL = '''template <typename Traits>
__global__ void load_kernel(float* x, int n) {
    __shared__ typename Traits::Storage smem;
    if constexpr (Traits::kVec) {
        {spell}Traits::BlockLoadT(smem).Load(x, n);
    } else {
        {spell}Traits::BlockLoadT(smem).Load(x, n - 1);
    }
}
'''

PORT_KERNEL = '''// portq: ports vllm:csrc/load/load.cu::load_kernel
template <typename Traits>
__global__ void kernel_load(float* x, int n) {
    __shared__ typename Traits::Storage smem;
    Traits::BlockLoadT(smem).Load(x, n);
}

void run_load(float* x, int n) { kernel_load<Vec><<<1, 32>>>(x, n); }
'''


def _disambiguated(tmp_path, spell="typename "):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/load/load.cu": KERNEL.replace("{spell}", "")}),
        CommitSpec("disambiguate", files={"csrc/load/load.cu": KERNEL.replace("{spell}", spell)})],
        {"kernels/load.cu": PORT_KERNEL})
    return _symbol(verdicts[1], "load_kernel")


def test_typename_before_a_dependent_qualified_name_is_cosmetic_despite_the_parse(tmp_path):
    kernel = _disambiguated(tmp_path)
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason
    assert "dependent-name-disambiguator" in kernel.rules, kernel.rules


def test_a_qualified_name_changed_beside_the_disambiguator_stays_flagged(tmp_path):
    kernel = _disambiguated(tmp_path, spell="typename Other::")
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "dependent-name-disambiguator" not in kernel.rules


def test_a_new_macro_a_header_of_the_commit_names_stays_flagged(tmp_path):
    # the launcher now includes a header that reads the macro too: its expansion there is not this file's
    launch_new = LAUNCH_NEW.replace("template <int N>", '#include "attrs.h"\ntemplate <int N>', 1)
    top_old = LAUNCH_TOP.replace("{cuda_define}", "").replace("{other_define}", "")
    top_new = LAUNCH_TOP.replace("{cuda_define}", CUDA_DEFINE).replace("{other_define}", OTHER_DEFINE)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/norm/launch.cu": top_old + LAUNCH_OLD}),
        CommitSpec("another compiler", files={"csrc/norm/launch.cu": top_new + launch_new,
                                              "csrc/norm/attrs.h": "#define SET_ATTR(k) GPU_B_ONLY((void *)) k\n"})],
        {"kernels/norm/launch.cu": PORT_LAUNCH})
    top = _symbol(verdicts[1], "<toplevel>")
    assert "new-macro-lines" not in top.rules, top.rules
