"""The vendored AutoAWQ subset's package root. quantize/quantizer.py,
quantize/qmodule.py and quantize/auto_clip.py are upstream's, written by
the accuracy scorer; this root and the stand-ins beside them are the
tree's own and import nothing. qmodule.py imports the built CUDA
extension as the top-level module f16s4_gemm, as upstream does."""
