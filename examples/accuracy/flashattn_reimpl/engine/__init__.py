"""The model-side callers of the attention port."""
