"""The vendored MInference subset's package root. ops/pit_sparse_flash_attention_v2.py,
ops/block_sparse_flash_attention.py and csrc/ (the index builder and its
binding, built as minference.cuda) are upstream's, written by the accuracy
scorer; this root is the tree's own and imports nothing, so the ops load
without upstream's model patches."""
