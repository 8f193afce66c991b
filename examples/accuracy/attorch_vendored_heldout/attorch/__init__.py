"""The vendored attorch subset's package root. The activation and softmax
kernel and layer modules, utils.py and types.py are upstream's, written by
the accuracy scorer; this root is the tree's own and imports nothing, so
the subset loads without upstream's other layers."""
