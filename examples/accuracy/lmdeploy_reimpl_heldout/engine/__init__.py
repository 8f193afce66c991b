"""A minimal paged-cache decoder step, the caller of pagedops."""

from .decode_step import DecodeStep

__all__ = ["DecodeStep"]
