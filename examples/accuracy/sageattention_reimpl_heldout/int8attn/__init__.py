"""Int8-QK attention for the engine: per-block quantisation of Q and K and the
Triton attention forward over the int8 scores with fp16 P·V. Must not import
the engine."""
