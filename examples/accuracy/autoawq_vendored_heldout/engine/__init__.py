from .calibrate import MLPBlock, Stack, calibrate_and_pack, collect_inputs

__all__ = ["MLPBlock", "Stack", "calibrate_and_pack", "collect_inputs"]
