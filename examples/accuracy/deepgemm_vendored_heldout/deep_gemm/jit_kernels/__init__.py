"""The tree's own package file beside the vendored hosts; imports nothing."""
