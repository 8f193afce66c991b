"""The vendored sparse attention ops (upstream's files, written by the scorer)."""
