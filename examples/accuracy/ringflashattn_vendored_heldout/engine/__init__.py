"""The engine's context-parallel attention on the vendored ring attention."""

from .context_parallel import prefill_attention

__all__ = ["prefill_attention"]
