# SPDX-License-Identifier: MIT
# Copyright (C) 2024-2026, Advanced Micro Devices, Inc. All rights reserved.

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(
    input_ptr,
    output_ptr,
    weight_ptr,
    input_row_stride,
    output_row_stride,
    n_cols,
    epsilon,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(input_ptr + row * input_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    norm = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + epsilon)
    w = tl.load(weight_ptr + cols, mask=mask, other=0.0)
    tl.store(output_ptr + row * output_row_stride + cols, (x * norm).to(w.dtype) * w, mask=mask)


def rms_norm(input: torch.Tensor, weight: torch.Tensor, epsilon: float) -> torch.Tensor:
    n_rows, n_cols = input.shape
    output = torch.empty_like(input)
    _rms_norm_kernel[(n_rows,)](
        input, output, weight, input.stride(0), output.stride(0), n_cols, epsilon,
        BLOCK_SIZE=triton.next_power_of_2(n_cols),
    )
    return output
