"""KERNEL-ATTN-MLA-PREFIX: MLA cached-prefix expansion (gather_kv_b_proj)."""
