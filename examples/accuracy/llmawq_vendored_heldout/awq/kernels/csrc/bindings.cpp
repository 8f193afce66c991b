// The tree's own binding of the vendored kernels as awq_inference_engine:
// only the three entry points the engine calls (upstream's pybind.cpp, which
// binds more, is not vendored).
#include <pybind11/pybind11.h>
#include <torch/extension.h>

#include "layernorm/layernorm.h"
#include "position_embedding/pos_encoding.h"
#include "quantization/gemm_cuda.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("layernorm_forward_cuda", &layernorm_forward_cuda, "T5-style RMSNorm");
  m.def("gemm_forward_cuda", &gemm_forward_cuda, "W4A16 GEMM");
  m.def("rotary_embedding_neox", &rotary_embedding_neox, "Neox rotary embedding of query and key, in place");
}
