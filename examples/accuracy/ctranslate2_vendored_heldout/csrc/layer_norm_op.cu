// The engine's LayerNorm over CTranslate2's CUDA kernel, vendored unmodified
// under third_party/ctranslate2/ (ops/layer_norm_gpu.cu with cuda/helpers.h;
// the rest of CTranslate2's src/ and include/ at the same commit on the build's
// include path, its library linked for the op class it instantiates). The
// vendored file is compiled into this translation unit so that its kernel can
// be launched directly with the engine's stream and the model's epsilon; the
// vendored LayerNorm::compute is built but called by nothing here.
#include "ops/layer_norm_gpu.cu"

#include <cuda_fp16.h>

namespace engine_ct2v {

// x, y: (rows, depth) contiguous; gamma, beta: (depth,). One block of
// CUDA_NUM_THREADS (the vendored kernel's block reduction size) per row.
template <typename T>
void layer_norm_rows(const T* x, const T* gamma, const T* beta, T* y, long rows, long depth, float epsilon,
                     cudaStream_t stream)
{
    at::native::LayerNormForwardCUDAKernel<T, ctranslate2::cuda::index_t>
        <<<static_cast<unsigned>(rows), CUDA_NUM_THREADS, 0, stream>>>(
            static_cast<ctranslate2::cuda::index_t>(depth), static_cast<T>(epsilon), x, gamma, beta, y);
}

template void layer_norm_rows<float>(const float*, const float*, const float*, float*, long, long, float,
                                     cudaStream_t);
template void layer_norm_rows<__half>(const __half*, const __half*, const __half*, __half*, long, long, float,
                                      cudaStream_t);

}  // namespace engine_ct2v
