"""The padded-keys causal bias the vendored rope_padded takes, reduced to the
sequence layout it reads (query starts, cache slot starts, used cache
lengths). Not upstream's class: no mask materialisation, no attention."""

from dataclasses import dataclass
from typing import List

import torch


@dataclass
class _SeqLayout:
    seqstart_py: List[int]
    seqstart: torch.Tensor
    seqlen_py: List[int]
    seqlen: torch.Tensor
    max_seqlen: int

    def to(self, device):
        self.seqstart = self.seqstart.to(device)
        self.seqlen = self.seqlen.to(device)
        return self


class BlockDiagonalCausalWithOffsetPaddedKeysMask:
    """Queries packed back to back; each element's keys in a fixed-size slot."""

    def __init__(self, q_seqinfo: _SeqLayout, k_seqinfo: _SeqLayout):
        self.q_seqinfo = q_seqinfo
        self.k_seqinfo = k_seqinfo

    @classmethod
    def from_seqlens(cls, q_seqlen, kv_padding, kv_seqlen):
        if len(q_seqlen) != len(kv_seqlen) or any(k > kv_padding for k in kv_seqlen):
            raise ValueError("one kv length per query length, each at most kv_padding")
        q_starts = [0]
        for n in q_seqlen:
            q_starts.append(q_starts[-1] + n)
        k_starts = [kv_padding * b for b in range(len(kv_seqlen) + 1)]
        as_tensor = lambda xs: torch.tensor(xs, dtype=torch.int32)  # noqa: E731
        q = _SeqLayout(q_starts, as_tensor(q_starts), list(q_seqlen), as_tensor(list(q_seqlen)),
                       max(q_seqlen))
        k = _SeqLayout(k_starts, as_tensor(k_starts), list(kv_seqlen), as_tensor(list(kv_seqlen)),
                       max(kv_seqlen))
        return cls(q, k)
