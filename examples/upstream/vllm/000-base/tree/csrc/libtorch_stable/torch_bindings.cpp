// Registers the cache operators in the _C_cache_ops namespace.
#include "cache.h"
#include "core/registration.h"

#include <torch/library.h>

TORCH_LIBRARY_EXPAND(CONCAT(TORCH_EXTENSION_NAME, _cache_ops), cache_ops) {
  cache_ops.def(
      "swap_blocks(Tensor src, Tensor! dst, Tensor block_mapping) -> ()");
  cache_ops.impl("swap_blocks", torch::kCUDA, &swap_blocks);

  cache_ops.def(
      "concat_and_cache_mla(Tensor kv_c, Tensor k_pe, Tensor! kv_cache, "
      "Tensor slot_mapping, str kv_cache_dtype, Tensor scale) -> ()");
  cache_ops.impl("concat_and_cache_mla", torch::kCUDA, &concat_and_cache_mla);

  cache_ops.def(
      "gather_and_maybe_dequant_cache(Tensor src_cache, Tensor! dst, "
      "Tensor block_table, Tensor cu_seq_lens, Tensor token_to_seq, "
      "int num_tokens, str kv_cache_dtype, Tensor scale, "
      "Tensor? seq_starts) -> ()");
  cache_ops.impl("gather_and_maybe_dequant_cache", torch::kCUDA,
                 &gather_and_maybe_dequant_cache);

  cache_ops.def(
      "cp_gather_cache(Tensor src_cache, Tensor! dst, Tensor block_table, "
      "Tensor cu_seq_lens, int batch_size, Tensor? seq_starts) -> ()");
  cache_ops.impl("cp_gather_cache", torch::kCUDA, &cp_gather_cache);

  cache_ops.def(
      "cp_gather_and_upconvert_fp8_kv_cache(Tensor src_cache, Tensor! dst, "
      "Tensor block_table, Tensor seq_lens, Tensor workspace_starts, "
      "int batch_size) -> ()");
  cache_ops.impl("cp_gather_and_upconvert_fp8_kv_cache", torch::kCUDA,
                 &cp_gather_and_upconvert_fp8_kv_cache);

  cache_ops.def(
      "cp_gather_and_upconvert_nvfp4_kv_cache(Tensor src_cache, Tensor! dst, "
      "Tensor block_table, Tensor workspace_starts, int batch_size) -> ()");
  cache_ops.impl("cp_gather_and_upconvert_nvfp4_kv_cache", torch::kCUDA,
                 &cp_gather_and_upconvert_nvfp4_kv_cache);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
