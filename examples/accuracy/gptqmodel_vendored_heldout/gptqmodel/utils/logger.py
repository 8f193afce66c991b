"""The one logger the vendored kernel modules ask for at import, set up once.
A stand-in of the project's own: it must not configure the root logger."""

import logging

_LOGGER = None


def setup_logger():
    """The shared logger of the vendored kernels, created on first use."""
    global _LOGGER
    if _LOGGER is None:
        _LOGGER = logging.getLogger("gptqmodel")
        _LOGGER.addHandler(logging.NullHandler())
    return _LOGGER
