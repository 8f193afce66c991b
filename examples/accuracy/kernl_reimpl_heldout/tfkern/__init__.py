"""Transformer inference kernels for the engine: a single-pass (Welford)
LayerNorm forward and a fused attention forward with an additive mask.
Forward only. Must not import the engine."""
