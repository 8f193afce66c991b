"""Autotuning helpers shared by the kernels: the power-of-two rounding the
pruners use, and the switch that keeps one config when the kernels run
under the CPU interpreter (tuning there would take minutes)."""

import math
import os


def pow2_at_least_16(value):
    return max(2 ** int(math.ceil(math.log2(value))), 16)


def interpreted():
    return os.environ.get("TRITON_INTERPRET") == "1"


def first_only(configs):
    return configs[:1] if interpreted() else configs
