"""The decoder engine: the parts of a block that surround attention, and the head's loss."""
