"""The tree's own stand-in for upstream's host-side integer helpers."""


def clamp(v, lo, hi):
    return max(lo, min(hi, v))


def prev_pow2(x):
    return 1 << (x.bit_length() - 1) if x > 0 else 0
