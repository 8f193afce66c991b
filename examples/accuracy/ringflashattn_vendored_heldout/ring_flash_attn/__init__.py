"""The vendored ring-flash-attention subset's package root. utils.py,
triton_utils.py and ring_flash_attn_varlen.py are upstream's, written by the
accuracy scorer, and import each other relatively; this root is the tree's
own and imports nothing, so the subset loads without upstream's other ring
variants."""
