"""The decoder engine: the norm, rotary and MLP steps of a block, and the head's loss."""
