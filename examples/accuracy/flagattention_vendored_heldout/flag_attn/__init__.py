"""The vendored FlagAttention subset's package root. piecewise.py is
upstream's, written by the accuracy scorer; this root is the tree's own and
imports nothing, so the subset loads without upstream's packaging."""
