"""portq_kernels: the Triton port of vLLM's MLA cache kernels and aiter's MLA
prefix expansion, plus the in-tree callers an inference engine would have.

Imported as ``portq_kernels`` (the directory is ``kernels/``) so that it never
shadows the PyPI package ``kernels``. Nothing here imports the ``portq``
auditor: the port must stand on its own.
"""
