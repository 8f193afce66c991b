"""The tree's own stand-in for upstream's backend enum, which the vendored
host modules compare against; nothing else."""

from enum import Enum


class KernelBackend(Enum):
    cuda = "cuda"
    triton = "triton"
