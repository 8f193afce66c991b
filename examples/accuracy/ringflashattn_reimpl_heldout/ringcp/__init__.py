"""Context-parallel attention over a ring of ranks for the engine: each rank
keeps its queries, passes its key/value block to the next rank, and merges
the partial outputs through their log-sum-exp. Variable-length (packed)
sequences, forward only. Must not import the engine."""
