// The engine's softmax over CTranslate2's CUDA kernel, vendored unmodified
// under third_party/ctranslate2/ (ops/softmax_gpu.cu with cuda/helpers.h; the
// rest of CTranslate2's src/ and include/ at the same commit on the build's
// include path). The vendored file is compiled into this translation unit so
// that its file-local softmax_kernel can be called with the engine's stream;
// the vendored SoftMax::compute is built but called by nothing here, and the
// engine never asks for the log-softmax.
#include "ops/softmax_gpu.cu"

#include <cuda_fp16.h>

#include <cstdint>

namespace engine_ct2v {

// The host type softmax_kernel is instantiated for: CTranslate2's float16_t
// for the engine's __half buffers (same layout), the type itself otherwise.
template <typename T>
struct HostType {
    using type = T;
};
template <>
struct HostType<__half> {
    using type = ctranslate2::float16_t;
};

// x, y: (rows, cols) contiguous; lengths: int32 per row or nullptr.
template <typename T>
void softmax_rows(const T* x, const int32_t* lengths, T* y, long rows, long cols, cudaStream_t stream)
{
    using U = typename HostType<T>::type;
    ctranslate2::ops::softmax_kernel(stream, /*log_softmax=*/false, reinterpret_cast<const U*>(x), rows, cols,
                                     lengths, reinterpret_cast<U*>(y));
}

template void softmax_rows<float>(const float*, const int32_t*, float*, long, long, cudaStream_t);
template void softmax_rows<__half>(const __half*, const int32_t*, __half*, long, long, cudaStream_t);

}  // namespace engine_ct2v
