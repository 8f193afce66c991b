"""The model-side callers of the vendored FlashAttention-2 forward."""
