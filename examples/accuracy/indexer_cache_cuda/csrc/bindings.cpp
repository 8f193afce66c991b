// Registers the indexer cache ops as torch.ops.dsv32.*.
#include <torch/all.h>
#include <torch/library.h>

void indexer_k_quant_and_cache(torch::Tensor& k, torch::Tensor& kv_cache, torch::Tensor& slot_mapping,
                               int64_t quant_block_size, const std::string& scale_fmt);
void cp_gather_indexer_k_quant_cache(const torch::Tensor& kv_cache, torch::Tensor& dst_k, torch::Tensor& dst_scale,
                                     const torch::Tensor& block_table, const torch::Tensor& cu_seq_lens);

TORCH_LIBRARY(dsv32, m)
{
    m.def("indexer_k_quant_and_cache(Tensor! k, Tensor! kv_cache, Tensor slot_mapping, int quant_block_size, str scale_fmt) -> ()");
    m.impl("indexer_k_quant_and_cache", torch::kCUDA, &indexer_k_quant_and_cache);
    m.def("cp_gather_indexer_k_quant_cache(Tensor kv_cache, Tensor! dst_k, Tensor! dst_scale, Tensor block_table, Tensor cu_seq_lens) -> ()");
    m.impl("cp_gather_indexer_k_quant_cache", torch::kCUDA, &cp_gather_indexer_k_quant_cache);
}
