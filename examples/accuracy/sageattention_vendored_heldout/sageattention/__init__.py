"""The vendored SageAttention subset's package root. core.py, the per-block
quantiser and the four head-dimension attention modules are upstream's,
written by the accuracy scorer; this root is the tree's own and imports
nothing, so the subset loads without upstream's setup."""
