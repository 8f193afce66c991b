"""Training-free sparse attention for the engine: block-map prediction by
mean similarity (Triton), per-block int8 quantisation of Q and K (Triton),
and block-sparse attention over the selected tiles (PyTorch, standing in for
upstream's CUDA extension). Must not import the engine."""
