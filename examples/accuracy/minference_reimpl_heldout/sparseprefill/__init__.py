"""Dynamic sparse attention for long-context prefill: the vertical-and-slash
index builder and sparse flash attention, and block-sparse flash attention
over a top-k block index (Triton). Must not import the engine."""

# The A-shape/streaming attention (Triton) is left out: the engine has no
# streaming heads.
# portq: not-carried minference:minference/ops/streaming_kernel.py::_attn_fwd_inner -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::_attn_fwd -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::_score_kernel -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::get_score -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::_forward -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::MultiStageDotProductionAttention -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::TritonMultiStageDotProductionAttention -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::repeat_kv -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::streaming_forward -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::streaming_forward2 -- no streaming heads in this engine
# portq: not-carried minference:minference/ops/streaming_kernel.py::stream_llm_forward -- no streaming heads in this engine
