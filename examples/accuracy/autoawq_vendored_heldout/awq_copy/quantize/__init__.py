"""The tree's own package file for the vendored quantize/ modules; re-exports nothing."""
