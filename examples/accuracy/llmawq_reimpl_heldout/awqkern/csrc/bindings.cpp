// The engine's CUDA extension: only the rotary embedding (the GEMM and the
// norm are Triton).
#include <pybind11/pybind11.h>
#include <torch/extension.h>

#include "rotary_neox.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rotary_neox", &awqkern::rotary_neox, "Neox rotary embedding of query and key, in place");
}
