"""The vendored kernel packages; upstream's aggregate re-exports (MoE, add,
embedding) are not vendored, so this root imports nothing."""
