"""The engine-wide configuration and its cross-field validation."""

from dataclasses import dataclass, field


@dataclass
class VllmConfig:
    model_config: object = None
    cache_config: object = None
    parallel_config: object = None
    speculative_config: object = None
    compilation_config: dict = field(default_factory=dict)

    def __post_init__(self):
        self.validate_block_size()
        self.validate_nvfp4_kv_cache_with_mla()

    def validate_block_size(self):
        cache = self.cache_config
        if cache is None:
            return
        interleave = self.parallel_config.cp_kv_cache_interleave_size
        if cache.block_size % interleave != 0:
            raise ValueError(
                f"block_size ({cache.block_size}) must be a multiple of "
                f"cp_kv_cache_interleave_size ({interleave})")

    def validate_nvfp4_kv_cache_with_mla(self):
        cache = self.cache_config
        if cache is None or cache.cache_dtype != "nvfp4_ds_mla":
            return
        if not self.model_config.use_mla:
            raise ValueError("nvfp4_ds_mla needs an MLA model")
        if cache.block_size % 64 != 0:
            raise ValueError("nvfp4_ds_mla needs a block size that is a "
                             "multiple of 64")
