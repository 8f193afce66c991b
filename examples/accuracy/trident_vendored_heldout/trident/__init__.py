"""The vendored Trident subset's package root: the kernel and operation
modules are upstream's (written by the accuracy scorer); this root, the
language, util and math stand-ins are the tree's own."""
