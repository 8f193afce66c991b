"""In-tree MLA prefill callers: what makes the ported kernels reachable."""
