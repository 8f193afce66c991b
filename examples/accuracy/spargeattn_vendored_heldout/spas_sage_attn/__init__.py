"""The vendored SpargeAttn subset's package root. core.py, utils.py and
quant_per_block.py are upstream's, written by the accuracy scorer; this root
is the tree's own and imports nothing, so the Triton modules load without
upstream's setup (core.py still needs the CUDA extension built beside it)."""
