"""Rotary position embedding for query and key together: our own Triton
kernel doing what aiter's ``rope_cached_thd_positions_2c_fwd`` does, written
against its semantics."""

from ropeops.rope import GPTJ, NEOX, rope_qk

__all__ = ["GPTJ", "NEOX", "rope_qk"]
