// Neox-style rotary embedding of query and key, in place. Each block rotates
// one token: for every head, element i of the first half of the rotary
// dimensions is paired with element i of the second half, and the cos/sin
// cache row of the token's position holds rot_dim/2 cosines then rot_dim/2
// sines.

#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#include "rotary_neox.h"

namespace awqkern {

// portq: ports llmawq:awq/kernels/csrc/position_embedding/pos_encoding_kernels.cu::rotary_embedding_neox_kernel @5f377ef
template <typename T>
__global__ void neox_rotate_kernel(const int64_t* __restrict__ positions,
                                   T* __restrict__ q,
                                   T* __restrict__ k,
                                   const T* __restrict__ cos_sin,
                                   const int rot_dim,
                                   const int token_stride,
                                   const int heads,
                                   const int head_dim) {
  const int token = blockIdx.x;
  const T* row = cos_sin + positions[token] * rot_dim;
  const int half_rot = rot_dim / 2;
  for (int i = threadIdx.x; i < heads * half_rot; i += blockDim.x) {
    const int head = i / half_rot;
    const int lo = i % half_rot;
    const int hi = half_rot + lo;
    const int base = token * token_stride + head * head_dim;
    const T c = row[lo];
    const T s = row[hi];
    const T q_lo = q[base + lo];
    const T q_hi = q[base + hi];
    q[base + lo] = q_lo * c - q_hi * s;
    q[base + hi] = q_hi * c + q_lo * s;
    const T k_lo = k[base + lo];
    const T k_hi = k[base + hi];
    k[base + lo] = k_lo * c - k_hi * s;
    k[base + hi] = k_hi * c + k_lo * s;
  }
}

// portq: ports llmawq:awq/kernels/csrc/position_embedding/pos_encoding_kernels.cu::rotary_embedding_neox @5f377ef
void rotary_neox(torch::Tensor& positions,  // (B, T)
                 torch::Tensor& q,          // (B, T, 1, H, D)
                 torch::Tensor& k,          // (B, T, 1, H, D)
                 int head_dim,
                 torch::Tensor& cos_sin) {  // (max_position, rot_dim)
  const int tokens = q.size(0) * q.size(1);
  const int rot_dim = cos_sin.size(1);
  const int heads = q.size(-2);
  const int token_stride = heads * head_dim;
  dim3 grid(tokens);
  dim3 block(std::min(heads * rot_dim / 2, 512));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, q.scalar_type(), "rotary_neox", [&] {
    neox_rotate_kernel<scalar_t><<<grid, block, 0, stream>>>(
        positions.data_ptr<int64_t>(), q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(),
        cos_sin.data_ptr<scalar_t>(), rot_dim, token_stride, heads, head_dim);
  });
}

}  // namespace awqkern
