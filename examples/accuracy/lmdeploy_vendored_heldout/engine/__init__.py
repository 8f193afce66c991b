"""A minimal paged-cache decoder step, calling the vendored LMDeploy kernels."""
