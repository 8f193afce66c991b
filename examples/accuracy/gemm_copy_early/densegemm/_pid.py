"""Program-id helpers the GEMM kernel uses: spread tiles over the XCDs of a
multi-die GPU, then walk them in groups of GROUP_SIZE_M rows for L2 reuse."""

import triton
import triton.language as tl


@triton.jit
def remap_xcd(pid, GRID_MN, NUM_XCDS: tl.constexpr = 8):
    # Programs are dealt round-robin to the dies; renumber them so that each
    # die gets a contiguous run of tiles. When GRID_MN is not a multiple of
    # NUM_XCDS the first `tall` dies hold one tile more than the others.
    per_xcd = (GRID_MN + NUM_XCDS - 1) // NUM_XCDS
    tall = GRID_MN % NUM_XCDS
    tall = NUM_XCDS if tall == 0 else tall
    xcd = pid % NUM_XCDS
    local = pid // NUM_XCDS
    if xcd < tall:
        pid = xcd * per_xcd + local
    else:
        pid = tall * per_xcd + (xcd - tall) * (per_xcd - 1) + local
    return pid


@triton.jit
def pid_grid(pid, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr = 1):
    if GROUP_SIZE_M == 1:
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    else:
        group_span = GROUP_SIZE_M * num_pid_n
        first_m = (pid // group_span) * GROUP_SIZE_M
        rows = min(num_pid_m - first_m, GROUP_SIZE_M)
        pid_m = first_m + (pid % rows)
        pid_n = (pid % group_span) // rows
    return pid_m, pid_n
