"""Model layers of the engine: the production callers of the ports."""
