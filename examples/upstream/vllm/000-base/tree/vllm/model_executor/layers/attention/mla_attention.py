"""Multi-head latent attention: metadata for the chunked-context prefill and
the prefill/decode implementation shared by the MLA backends."""

from dataclasses import dataclass

import torch

from vllm import _custom_ops as ops
from vllm.distributed import get_dcp_group
from vllm.v1.attention.ops.merge_attn_states import merge_attn_states


@dataclass
class ChunkedContextMetadata:
    cu_seq_lens: torch.Tensor  # [num_chunks, num_prefills + 1]
    starts: torch.Tensor  # [num_chunks, num_prefills]
    seq_tot: list[int]
    max_seq_lens: list[int]
    token_to_seq: torch.Tensor  # [num_chunks, max_chunk_tokens]
    chunk_total_token: list[int]
    workspace: torch.Tensor
    padded_local_cu_seq_lens: torch.Tensor | None = None
    local_chunk_starts: torch.Tensor | None = None


def determine_chunked_prefill_workspace_size(max_model_len: int,
                                             max_num_seqs: int,
                                             block_size: int) -> int:
    workspace = min(max(8 * max_model_len, 4 * max_num_seqs * block_size),
                    64 * 1024)
    return max(workspace, max_num_seqs * block_size)


class MLACommonMetadataBuilder:

    def __init__(self, workspace: torch.Tensor, page_size: int):
        self.chunked_prefill_workspace = workspace
        self.page_size = page_size

    def build_chunked_context(self, context_lens: torch.Tensor,
                              num_prefills: int) -> ChunkedContextMetadata:
        workspace_size = self.chunked_prefill_workspace.shape[0]
        max_context_chunk = workspace_size // num_prefills
        # The gather cannot take unaligned chunk starts: round to the page size.
        max_context_chunk = (max_context_chunk // self.page_size) * self.page_size
        num_chunks = -(-int(context_lens.max()) // max_context_chunk)

        chunk_starts = (torch.arange(num_chunks, dtype=torch.int32).unsqueeze(1)
                        .expand(-1, num_prefills) * max_context_chunk)
        chunk_ends = torch.min(context_lens.unsqueeze(0),
                               chunk_starts + max_context_chunk)
        chunk_seq_lens = (chunk_ends - chunk_starts).clamp(min=0)
        cu_seq_lens = torch.zeros(num_chunks, num_prefills + 1,
                                  dtype=torch.int32)
        torch.cumsum(chunk_seq_lens, dim=1, out=cu_seq_lens[:, 1:])
        chunk_total_token = cu_seq_lens[:, -1].tolist()

        token_to_seq = torch.zeros(num_chunks, max(chunk_total_token),
                                   dtype=torch.int32)
        for i in range(num_chunks):
            token_to_seq[i, :chunk_total_token[i]] = torch.repeat_interleave(
                torch.arange(num_prefills, dtype=torch.int32), chunk_seq_lens[i])

        return ChunkedContextMetadata(
            cu_seq_lens=cu_seq_lens,
            starts=chunk_starts,
            seq_tot=chunk_seq_lens.sum(dim=1).tolist(),
            max_seq_lens=chunk_seq_lens.max(dim=1).values.tolist(),
            token_to_seq=token_to_seq,
            chunk_total_token=chunk_total_token,
            workspace=self.chunked_prefill_workspace,
        )


class MLACommonImpl:

    def __init__(self, kv_lora_rank: int, kv_cache_dtype: str, kv_b_proj,
                 use_fp8_prefill: bool = False):
        self.kv_lora_rank = kv_lora_rank
        self.kv_cache_dtype = kv_cache_dtype
        self.kv_b_proj = kv_b_proj
        self.use_fp8_prefill = use_fp8_prefill

    def _compute_prefill_context(self, q, kv_c_and_k_pe_cache, attn_metadata,
                                 k_scale):
        prefill = attn_metadata.prefill
        chunked = prefill.chunked_context
        output = None
        output_lse = None
        for i in range(len(chunked.seq_tot)):
            toks = chunked.seq_tot[i]
            if self.use_fp8_prefill:
                ops.cp_gather_cache(
                    src_cache=kv_c_and_k_pe_cache,
                    dst=chunked.workspace,
                    block_table=prefill.block_table,
                    cu_seq_lens=chunked.cu_seq_lens[i],
                    batch_size=attn_metadata.num_prefills,
                    seq_starts=chunked.starts[i],
                )
            else:
                ops.gather_and_maybe_dequant_cache(
                    src_cache=kv_c_and_k_pe_cache,
                    dst=chunked.workspace,
                    block_table=prefill.block_table,
                    cu_seq_lens=chunked.cu_seq_lens[i],
                    token_to_seq=chunked.token_to_seq[i],
                    num_tokens=chunked.chunk_total_token[i],
                    kv_cache_dtype=self.kv_cache_dtype,
                    scale=k_scale,
                    seq_starts=chunked.starts[i],
                )
            kv_c_normed = chunked.workspace[:toks][..., :self.kv_lora_rank]
            k_pe = chunked.workspace[:toks][..., self.kv_lora_rank:].unsqueeze(1)
            output, output_lse = self._attend_chunk(q, kv_c_normed, k_pe,
                                                    output, output_lse)
        return output, output_lse

    def _context_parallel_compute_prefill_context(self, q, kv_c_and_k_pe_cache,
                                                  attn_metadata, k_scale,
                                                  dcp_world_size):
        assert k_scale is None, "DCP does not support an fp8 KV cache yet"
        prefill = attn_metadata.prefill
        chunked = prefill.chunked_context
        output = None
        output_lse = None
        for i in range(len(chunked.seq_tot)):
            ops.cp_gather_cache(
                src_cache=kv_c_and_k_pe_cache,
                dst=chunked.workspace,
                block_table=prefill.block_table,
                cu_seq_lens=chunked.padded_local_cu_seq_lens[i],
                batch_size=attn_metadata.num_prefills,
                seq_starts=chunked.local_chunk_starts[i],
            )
            toks = chunked.seq_tot[i]
            gathered = get_dcp_group().all_gather(
                chunked.workspace[:toks // dcp_world_size], dim=0)
            kv_c_normed = gathered[..., :self.kv_lora_rank]
            k_pe = gathered[..., self.kv_lora_rank:].unsqueeze(1)
            output, output_lse = self._attend_chunk(q, kv_c_normed, k_pe,
                                                    output, output_lse)
        return output, output_lse

    def _attend_chunk(self, q, kv_c_normed, k_pe, output, output_lse):
        kv_nope = self.kv_b_proj(kv_c_normed)
        chunk_output, chunk_lse = self._run_prefill_context_chunk(
            q, kv_nope, k_pe)
        if output is None:
            return chunk_output, chunk_lse
        merged = torch.empty_like(output)
        merged_lse = torch.empty_like(output_lse)
        merge_attn_states(merged, output, output_lse, chunk_output, chunk_lse,
                          merged_lse)
        return merged, merged_lse
