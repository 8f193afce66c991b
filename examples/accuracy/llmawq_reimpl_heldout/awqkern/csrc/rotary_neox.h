#pragma once
#include <torch/extension.h>

namespace awqkern {

void rotary_neox(torch::Tensor& positions, torch::Tensor& q, torch::Tensor& k, int head_dim,
                 torch::Tensor& cos_sin);

}  // namespace awqkern
