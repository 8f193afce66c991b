"""Root of the vendored xformers modules (written from upstream by the
accuracy scorer). This file is the tree's own, not upstream's package root:
it holds only the Triton availability probe the vendored ops import."""


def _is_triton_available():
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True
