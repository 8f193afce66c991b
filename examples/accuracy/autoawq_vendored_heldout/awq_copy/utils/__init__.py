"""The tree's own utilities for the vendored modules."""
