"""KERNEL-KV-CACHE: paged MLA KV-cache write, gather, dequant and upconvert."""
