"""The inference engine's layers that call ring attention."""

from .context_parallel import prefill_attention

__all__ = ["prefill_attention"]
