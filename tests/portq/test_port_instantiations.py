"""Explicit template instantiations the port already has (``port-instantiations``): a commit takes back
instantiations and the ``#ifdef`` guard around them (half and bf16 dropped, float made unconditional),
leaving exactly the type arguments the port instantiates its mirror with, unguarded. The changed lines
are only instantiations (written out, or through an instantiation macro of the same file) and
preprocessor conditionals: the port already has the new form, IN_SYNC. A port that instantiates other
types, or a commit that leaves upstream's set different from the port's, stays flagged."""
from __future__ import annotations

from portq.core.model import IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

HOST = "csrc/cache_kernels.cu"
DEFINITIONS = '''\
#include <cuda_runtime.h>

namespace vllm {

template<typename T>
__global__ void sortKernel(T* x, int n)
{
    x[threadIdx.x] = x[threadIdx.x] * 2;
}

template<typename T>
void invokeSort(SortParams& params, cudaStream_t stream)
{
    sortKernel<T><<<1, params.n, 0, stream>>>(static_cast<T*>(params.x), params.n);
}

#define INSTANTIATE_INVOKE_SORT(T) template void invokeSort<T>(SortParams & params, cudaStream_t stream);

'''
BEFORE = DEFINITIONS + '''\
#ifdef ENABLE_FP32
INSTANTIATE_INVOKE_SORT(float);
#endif
INSTANTIATE_INVOKE_SORT(half);
#ifdef ENABLE_BF16
INSTANTIATE_INVOKE_SORT(nv_bfloat16);
#endif

}  // namespace vllm
'''
AFTER = DEFINITIONS + '''\
INSTANTIATE_INVOKE_SORT(float);

}  // namespace vllm
'''


def _written(text: str) -> str:
    for t in ("float", "half", "nv_bfloat16"):
        text = text.replace(f"INSTANTIATE_INVOKE_SORT({t});", f"template void invokeSort<{t}>(SortParams& params, cudaStream_t stream);")
    return text


WRITTEN_BEFORE, WRITTEN_AFTER = _written(BEFORE), _written(AFTER)
# Unsound neighbour: upstream ends with a set the port does not have.
HALF_AFTER = AFTER.replace("INSTANTIATE_INVOKE_SORT(float);", "INSTANTIATE_INVOKE_SORT(float);\nINSTANTIATE_INVOKE_SORT(half);")


def _tree(types=("float",)) -> dict[str, str]:
    port = (
        "#include <cuda_runtime.h>\n\n"
        f"// portq: ports vllm:{HOST}::vllm::sortKernel\n"
        "template<class T>\n__global__ void sort_kernel(T* x, int n)\n{\n    x[threadIdx.x] = x[threadIdx.x] * 2;\n}\n\n"
        f"// portq: ports vllm:{HOST}::vllm::invokeSort\n"
        "template<class T>\nvoid sort_rows(SortArgs& args, cudaStream_t stream)\n{\n"
        "    sort_kernel<T><<<1, args.n, 0, stream>>>(static_cast<T*>(args.x), args.n);\n}\n\n"
        "void run(SortArgs& args, cudaStream_t stream)\n{\n    sort_rows<float>(args, stream);\n}\n\n"
        + "".join(f"template void sort_rows<{t}>(SortArgs&, cudaStream_t);\n" for t in types)
    )
    return {"kernels/kv_cache/sort.cu": port}


def _one_commit(tmp_path, before, after, types=("float",)):
    return classify_commit(tmp_path, {HOST: before}, {HOST: after}, _tree(types), message="float only")


def test_instantiations_taken_back_to_the_ports_set_are_in_sync(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, AFTER)
    assert verdict.verdict == IN_SYNC, verdict.reason
    assert "port-instantiations" in verdict.rules, verdict.rules
    assert "float" in verdict.reason, verdict.reason


def test_written_out_instantiations_too(tmp_path):
    verdict = _one_commit(tmp_path, WRITTEN_BEFORE, WRITTEN_AFTER)
    assert verdict.verdict == IN_SYNC, verdict.reason
    assert "port-instantiations" in verdict.rules, verdict.rules


def test_a_port_with_other_types_is_still_flagged(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, AFTER, types=("float", "half"))
    assert verdict.verdict != IN_SYNC, verdict.reason
    assert "port-instantiations" not in verdict.rules


def test_a_commit_leaving_a_set_the_port_lacks_is_still_flagged(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, HALF_AFTER)
    assert verdict.verdict != IN_SYNC, verdict.reason
    assert "port-instantiations" not in verdict.rules


SOFTMAX = '''
template<typename T>
void invokeSoftmax(T* x, int n, cudaStream_t stream)
{
    sortKernel<T><<<1, n, 0, stream>>>(x, n);
}

'''
WITH_SOFTMAX_BEFORE = WRITTEN_BEFORE.replace("#ifdef ENABLE_FP32", SOFTMAX + "template void invokeSoftmax<half>(half* x, int n, cudaStream_t stream);\n\n#ifdef ENABLE_FP32")
WITH_SOFTMAX_AFTER = WRITTEN_AFTER.replace("template void invokeSort<float>", SOFTMAX + "template void invokeSort<float>")


def test_instantiations_of_a_template_declared_not_carried_are_not_the_ports(tmp_path):
    tree = _tree()
    tree["kernels/kv_cache/sort.cu"] = (f"// portq: not-carried vllm:{HOST}::vllm::invokeSoftmax -- the caller takes the softmax\n"
                                        + tree["kernels/kv_cache/sort.cu"])
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HOST: WITH_SOFTMAX_BEFORE}),
                   CommitSpec("float only", files={HOST: WITH_SOFTMAX_AFTER})], tree)
    assert verdicts[1].verdict == IN_SYNC, verdicts[1].reason
    assert "port-instantiations" in verdicts[1].rules
