"""The engine's stand-in for xformers' fmha package: the attention-bias class
the vendored rope_padded reads. Not vendored; written by hand."""
