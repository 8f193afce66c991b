"""Two 4-bit codes per byte: the shape arithmetic and the torch pack/unpack.

The first code of a pair sits in the byte's high nibble, the second in the
low nibble. Nothing here launches a kernel.
"""

import torch

NIBBLE = 0b1111


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::down_size
def packed_shape(size):
    """The shape of ``size`` with its last dimension halved (two codes a byte)."""
    if size[-1] % 2:
        raise ValueError(f"packed_shape: last dimension {size[-1]} of {tuple(size)} is odd")
    return (*size[:-1], size[-1] // 2)


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::up_size
def unpacked_shape(size):
    """The shape of ``size`` with its last dimension doubled."""
    return (*size[:-1], size[-1] * 2)


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::unpack_uint4
def unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """uint8 codes, two a byte (high nibble first), as one uint8 code per element."""
    if not packed.is_contiguous():
        raise ValueError("unpack_nibbles: packed must be contiguous")
    high = (packed >> 4).to(torch.uint8)
    low = (packed & NIBBLE).to(torch.uint8)
    return torch.stack((high, low), dim=-1).reshape(unpacked_shape(packed.shape))


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::pack_uint4
def pack_nibbles(codes: torch.Tensor) -> torch.Tensor:
    """One 4-bit code per uint8 element, packed two a byte (high nibble first)."""
    shape = codes.shape
    flat = codes.contiguous().reshape(-1)
    return ((flat[0::2] << 4) | flat[1::2]).reshape(packed_shape(shape))
