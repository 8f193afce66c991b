"""portq: keep a downstream kernel port honest against its upstreams.

The auditor is pure Python. It must not import torch, triton or the in-tree
kernels: ``portq scan`` has to start fast and run where no GPU stack exists.
"""

__version__ = "0.1.0"
