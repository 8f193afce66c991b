"""Writes each layer's new latent KV into the paged cache after projection."""

from mlaport.kv_cache import concat_and_cache_mla


def write_layer_kv(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, k_scale):
    """Called once per MLA layer and step, before attention."""
    concat_and_cache_mla(kv_c, k_pe.squeeze(1), kv_cache, slot_mapping, kv_cache_dtype, k_scale)
