"""Triton kernels of the causal convolution and their launchers: the
channel-first prefill convolution (one program per sequence and channel,
walking the sequence in tiles) and the single-token decoding step that rolls
the conv state. Launchers read a ConvParams; they check no user input (the
host entry points in host.py do)."""

import triton
import triton.language as tl

from .params import ConvParams

SUPPORTED_WIDTHS = (2, 3, 4)
"""Filter widths the kernels are specialised for (a constexpr each)."""

FWD_TILE_L = 128
"""Positions of the sequence one forward program computes per loop step."""

STEP_TILE_C = 64
"""Channels one decoding-step program updates."""


@triton.jit
def _silu(v):
    return v / (1.0 + tl.exp(-v))


# portq: not-carried causalconv1d:csrc/causal_conv1d_fwd.cu::causal_conv1d_channellast_fwd_kernel -- the engine keeps activations channel-first
# portq: not-carried causalconv1d:csrc/causal_conv1d_fwd.cu::causal_conv1d_channellast_fwd_launch -- the engine keeps activations channel-first
# portq: not-carried causalconv1d:csrc/causal_conv1d_fwd.cu::causal_conv1d_channellast_fwd_cuda -- the engine keeps activations channel-first
# portq: ports causalconv1d:csrc/causal_conv1d_fwd.cu::causal_conv1d_fwd_kernel
@triton.jit
def _causal_conv_fwd_kernel(
    x_ptr, weight_ptr, bias_ptr, out_ptr,
    seqlen,
    x_stride_b, x_stride_c, x_stride_l,
    w_stride_c, w_stride_w,
    out_stride_b, out_stride_c, out_stride_l,
    WIDTH: tl.constexpr, HAS_BIAS: tl.constexpr, SILU: tl.constexpr, TILE_L: tl.constexpr,
):
    seq = tl.program_id(0)
    chan = tl.program_id(1)
    x_row = x_ptr + seq * x_stride_b + chan * x_stride_c
    out_row = out_ptr + seq * out_stride_b + chan * out_stride_c
    bias = 0.0
    if HAS_BIAS:
        bias = tl.load(bias_ptr + chan).to(tl.float32)
    offs = tl.arange(0, TILE_L)
    for start in range(0, seqlen, TILE_L):
        pos = start + offs
        acc = tl.zeros([TILE_L], dtype=tl.float32) + bias
        for tap in tl.static_range(WIDTH):
            w = tl.load(weight_ptr + chan * w_stride_c + tap * w_stride_w).to(tl.float32)
            src = pos - (WIDTH - 1 - tap)
            xv = tl.load(x_row + src * x_stride_l, mask=(src >= 0) & (pos < seqlen), other=0.0)
            acc += w * xv.to(tl.float32)
        if SILU:
            acc = _silu(acc)
        tl.store(out_row + pos * out_stride_l, acc.to(out_ptr.dtype.element_ty), mask=pos < seqlen)


# portq: ports causalconv1d:csrc/causal_conv1d_fwd.cu::causal_conv1d_fwd_launch
def _launch_causal_conv_fwd(params: ConvParams, width: int) -> None:
    grid = (params.batch, params.dim)
    bias = params.bias if params.bias is not None else params.weight
    _causal_conv_fwd_kernel[grid](
        params.x, params.weight, bias, params.out,
        params.seqlen,
        *params.x_strides, *params.weight_strides, *params.out_strides,
        WIDTH=width, HAS_BIAS=params.bias is not None, SILU=params.silu_activation, TILE_L=FWD_TILE_L,
    )


# portq: ports causalconv1d:csrc/causal_conv1d_fwd.cu::causal_conv1d_fwd_cuda
def run_causal_conv_fwd(params: ConvParams) -> None:
    """The forward launch specialised for the filter's width (nothing for an unsupported one)."""
    if params.width in SUPPORTED_WIDTHS:
        _launch_causal_conv_fwd(params, params.width)


# portq: ports causalconv1d:csrc/causal_conv1d_update.cu::causal_conv1d_update_kernel
@triton.jit
def _conv_step_kernel(
    x_ptr, state_ptr, weight_ptr, bias_ptr, out_ptr,
    dim,
    x_stride_b, x_stride_c,
    s_stride_b, s_stride_c, s_stride_l,
    w_stride_c, w_stride_w,
    out_stride_b, out_stride_c,
    WIDTH: tl.constexpr, HAS_BIAS: tl.constexpr, SILU: tl.constexpr, TILE_C: tl.constexpr,
):
    seq = tl.program_id(0)
    chans = tl.program_id(1) * TILE_C + tl.arange(0, TILE_C)
    live = chans < dim
    state = state_ptr + seq * s_stride_b + chans * s_stride_c
    acc = tl.zeros([TILE_C], dtype=tl.float32)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + chans, mask=live, other=0.0).to(tl.float32)
    for tap in tl.static_range(WIDTH):
        if tap == WIDTH - 1:
            v = tl.load(x_ptr + seq * x_stride_b + chans * x_stride_c, mask=live, other=0.0)
        else:
            v = tl.load(state + (tap + 1) * s_stride_l, mask=live, other=0.0)
        tl.store(state + tap * s_stride_l, v, mask=live)
        w = tl.load(weight_ptr + chans * w_stride_c + tap * w_stride_w, mask=live, other=0.0).to(tl.float32)
        acc += w * v.to(tl.float32)
    if SILU:
        acc = _silu(acc)
    tl.store(out_ptr + seq * out_stride_b + chans * out_stride_c, acc.to(out_ptr.dtype.element_ty), mask=live)


# portq: ports causalconv1d:csrc/causal_conv1d_update.cu::causal_conv1d_update_launch
def _launch_conv_step(params: ConvParams, width: int) -> None:
    grid = (params.batch, triton.cdiv(params.dim, STEP_TILE_C))
    bias = params.bias if params.bias is not None else params.weight
    _conv_step_kernel[grid](
        params.x, params.conv_state, params.weight, bias, params.out,
        params.dim,
        params.x_strides[0], params.x_strides[1],
        *params.conv_state_strides, *params.weight_strides,
        params.out_strides[0], params.out_strides[1],
        WIDTH=width, HAS_BIAS=params.bias is not None, SILU=params.silu_activation, TILE_C=STEP_TILE_C,
    )


# portq: ports causalconv1d:csrc/causal_conv1d_update.cu::causal_conv1d_update_cuda
def run_conv_step(params: ConvParams) -> None:
    """The decoding-step launch specialised for the filter's width."""
    if params.width in SUPPORTED_WIDTHS:
        _launch_conv_step(params, params.width)
