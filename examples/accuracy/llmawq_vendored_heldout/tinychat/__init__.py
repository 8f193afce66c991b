"""The vendored TinyChat subset's package root: modules/fused_norm.py is
upstream's, written by the accuracy scorer; the roots are the tree's own."""
