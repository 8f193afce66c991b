"""The vendored GPTQ-for-LLaMa subset's package root. quant.py and the CUDA
extension's sources beside it are upstream's, written by the accuracy
scorer; this root is the tree's own and imports nothing. quant.py imports
the built extension as the top-level module quant_cuda, as upstream does."""
