"""A minimal decoder layer's prefill step, the caller of kvops."""
