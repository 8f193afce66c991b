"""KERNEL-ATTN-MLA-SPARSE: sparse-MLA index utilities."""
