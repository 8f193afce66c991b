"""A minimal decoder layer's prefill step, calling the vendored LightLLM kernels."""
