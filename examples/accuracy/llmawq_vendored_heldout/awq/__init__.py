"""The vendored llm-awq subset's package root. quantize/qmodule.py and the
CUDA sources under kernels/csrc/ (quantization/, layernorm/,
position_embedding/) are upstream's, written by the accuracy scorer; this
root, quantize/__init__.py and kernels/csrc/bindings.cpp are the tree's own
and import nothing, so qmodule.py loads without upstream's quantisation
search (it still imports the built extension awq_inference_engine)."""
