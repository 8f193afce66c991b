from .calibrate import MLPBlock, calibrate_and_pack, collect_inputs

__all__ = ["MLPBlock", "calibrate_and_pack", "collect_inputs"]
