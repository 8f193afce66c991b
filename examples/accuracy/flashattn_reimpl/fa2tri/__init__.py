"""FlashAttention-2 style forward attention in Triton (re-implemented from
FlashAttention-2's CUDA forward): ``flash_attn_fwd`` picks the tiles by head
dimension and launches the kernel."""

from .launch import attention_forward as flash_attn_fwd
from .launch import fwd_hdim32, fwd_hdim64, fwd_hdim128

__all__ = ["flash_attn_fwd", "fwd_hdim32", "fwd_hdim64", "fwd_hdim128"]
