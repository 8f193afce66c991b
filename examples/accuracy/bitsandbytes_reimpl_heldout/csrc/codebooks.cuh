// The NF4 and FP4 codebooks as device helpers, re-implemented from
// bitsandbytes' kernels.cu. Encoding rounds a value already divided by its
// block's absmax (so in [-1, 1]) to the nearest code by comparing it against
// the midpoints between neighbouring levels; decoding looks the level up.
#pragma once

#include <cuda_runtime.h>

#include "common.cuh"

namespace engine_q4 {

// NF4: sixteen quantiles of a standard normal scaled to [-1, 1], code i is level i.
__device__ __constant__ float kNf4Levels[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};

// Midpoints between consecutive NF4 levels: a value above kNf4Cuts[i] encodes above i.
__device__ __constant__ float kNf4Cuts[15] = {
    -0.8480964004993439f, -0.6106329262256622f, -0.4599952697753906f, -0.33967943489551544f,
    -0.23460740596055984f, -0.13791173323988914f, -0.045525018125772476f, 0.03979014977812767f,
    0.1202552504837513f, 0.2035212516784668f, 0.2920137718319893f, 0.3893125355243683f,
    0.5016634166240692f, 0.6427869200706482f, 0.8614784181118011f};

// FP4 (E2M1 with a bias of 3, largest magnitude 12, stored scaled by 1/12):
// magnitude of each 3-bit code, the sign is bit 3.
__device__ __constant__ float kFp4Magnitudes[8] = {
    0.0f, 0.005208333333f, 0.66666667f, 1.0f, 0.33333333f, 0.5f, 0.16666667f, 0.25f};

// The 3-bit codes in increasing magnitude and the midpoints between them.
__device__ __constant__ unsigned char kFp4CodesByMagnitude[8] = {0b000, 0b001, 0b110, 0b111,
                                                                   0b100, 0b101, 0b010, 0b011};
__device__ __constant__ float kFp4Cuts[7] = {0.00260417f, 0.0859375f, 0.20833333f, 0.29166667f,
                                             0.4166667f,  0.583333f,  0.8333333f};

// portq: ports bitsandbytes:csrc/kernels.cu::dQuantizeNF4
__device__ __forceinline__ unsigned char nf4_encode(float x)
{
    unsigned char code = 0;
#pragma unroll
    for (int i = 0; i < 15; ++i) code += x > kNf4Cuts[i] ? 1 : 0;
    return code;
}

// portq: ports bitsandbytes:csrc/kernels.cu::dDequantizeNF4
__device__ __forceinline__ float nf4_decode(unsigned char code)
{
    return kNf4Levels[code & 0x0F];
}

// portq: ports bitsandbytes:csrc/kernels.cu::dQuantizeFP4
__device__ __forceinline__ unsigned char fp4_encode(float x)
{
    const unsigned char sign = x < 0.0f ? 0b1000 : 0b0000;
    const float magnitude = fabsf(x);
    int rank = 0;
#pragma unroll
    for (int i = 0; i < 7; ++i) rank += magnitude > kFp4Cuts[i] ? 1 : 0;
    return kFp4CodesByMagnitude[rank] | sign;
}

// Decodes and scales in one step: callers pass their block's absmax.
// portq: ports bitsandbytes:csrc/kernels.cu::dDequantizeFP4Tree
__device__ __forceinline__ float fp4_decode_scaled(unsigned char code, float absmax)
{
    const float sign = (code & 0b1000) ? -1.0f : 1.0f;
    return kFp4Magnitudes[code & 0b0111] * absmax * sign;
}

template <int KIND>
__device__ __forceinline__ unsigned char encode_4bit(float x)
{
    return KIND == kNF4 ? nf4_encode(x) : fp4_encode(x);
}

template <int KIND>
__device__ __forceinline__ float decode_4bit_scaled(unsigned char code, float absmax)
{
    return KIND == kNF4 ? nf4_decode(code) * absmax : fp4_decode_scaled(code, absmax);
}

}  // namespace engine_q4
