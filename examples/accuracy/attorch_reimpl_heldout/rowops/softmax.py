"""Softmax and log-softmax over the last dimension, forward only: a Triton
kernel over a tile of whole rows and its host launch. Must not save anything
for a backward."""

import torch
import triton
import triton.language as tl

from .tiles import rows_per_program


# portq: not-carried attorch:attorch/softmax_kernels.py::softmax_backward_kernel -- inference only, no gradient
# portq: ports attorch:attorch/softmax_kernels.py::softmax_forward_kernel
@triton.jit
def row_softmax_kernel(
    src, dst,
    n_rows, width,
    src_row_stride, src_col_stride,
    LOG: tl.constexpr,
    ROWS: tl.constexpr, COLS: tl.constexpr,
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    ok = (rows < n_rows)[:, None] & (cols < width)[None, :]

    x = tl.load(src + rows[:, None] * src_row_stride + cols[None, :] * src_col_stride,
                mask=ok, other=-float("inf"))
    shifted = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(shifted)
    total = tl.sum(e, axis=1)[:, None]
    if LOG:
        y = shifted - tl.log(total)
    else:
        y = e / total
    tl.store(dst + rows[:, None] * width + cols[None, :], y, mask=ok)


# portq: not-carried attorch:attorch/softmax_layers.py::SoftmaxAutoGrad.backward -- inference only, no gradient
# portq: not-carried attorch:attorch/softmax_layers.py::Softmin -- the engine never normalises by softmin
class RowSoftmaxOp:
    """Host side of the forward: flattens to rows, launches, restores the shape."""

    # portq: ports attorch:attorch/softmax_layers.py::SoftmaxAutoGrad.forward
    @staticmethod
    def forward(x: torch.Tensor, log: bool) -> torch.Tensor:
        rows = x.unsqueeze(0) if x.ndim == 1 else x
        rows = rows.flatten(0, -2)
        n_rows, width = rows.shape
        out = torch.empty_like(rows)
        block_rows = rows_per_program(n_rows, width)
        grid = (triton.cdiv(n_rows, block_rows),)
        row_softmax_kernel[grid](rows, out, n_rows, width, *rows.stride(),
                                 LOG=log, ROWS=block_rows, COLS=triton.next_power_of_2(width))
        return out.view_as(x)


def softmax_rows(x: torch.Tensor, log: bool = False) -> torch.Tensor:
    """The engine's entry point: (log-)softmax over the last dimension of `x`."""
    return RowSoftmaxOp.forward(x, log)
