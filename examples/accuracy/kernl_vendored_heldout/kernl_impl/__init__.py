"""The vendored kernl subset's package root. layer_norm.py and attention.py
are upstream's, written by the accuracy scorer; this root is the tree's own
and imports nothing, so the subset loads without upstream's packaging."""
