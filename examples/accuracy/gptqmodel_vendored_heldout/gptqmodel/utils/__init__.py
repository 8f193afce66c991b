"""The project's own stand-ins for the GPTQModel utilities the vendored kernels import."""
