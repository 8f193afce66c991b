"""The GPU timing method every kernel benchmark uses, so that 25 µs kernels time stably.

``triton.testing.do_bench`` times each launch on its own between cache
flushes; at 25-60 µs a launch gap or a clock ramp is then a large part of one
sample, and runs differed by 1.5x. Here one *trial* replays a CUDA graph of
``launches`` back-to-back calls (enough for about ``trial_ms`` of work, at
least ``min_launches``) after an L2 flush, timed by CUDA events around the
replay alone; the result is the median over ``trials`` trials of the time per
launch, with the fastest and slowest trial printed beside it. A 25 µs kernel
is thus timed over about 120 back-to-back launches per trial; a kernel of
milliseconds over ``min_launches``. Callables that
cannot be captured (a PyTorch path that synchronises) are timed the same way
as an eager loop of the same length, and say so (``Timing.method``).
``time_ratio`` times two callables interleaved in one loop (checked ÷
unchecked) and reports the median per-trial ratio with its spread.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch

#: Bytes written between trials to evict the L2 (the H200 has 60 MB).
FLUSH_BYTES = 256 << 20


@dataclass(frozen=True)
class Timing:
    """Per-launch milliseconds: median, fastest and slowest trial; how timed."""

    ms: float
    lo: float
    hi: float
    launches: int
    method: str

    @property
    def us(self) -> float:
        return self.ms * 1e3

    def spread(self) -> str:
        """``lo–hi`` in µs, for tables."""
        return f"{self.lo * 1e3:.1f}–{self.hi * 1e3:.1f}"


_flush = None


def _flush_l2() -> None:
    global _flush
    if _flush is None:
        _flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    _flush.zero_()


def _trials(run, trials: int, launches: int) -> list[float]:
    times = []
    for _ in range(trials):
        _flush_l2()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / launches)
    return times


def _launches_per_trial(fn, trial_ms: float, min_launches: int, max_launches: int) -> int:
    """How many back-to-back launches of ``fn`` fill about ``trial_ms``, from
    three timed eager calls (``fn`` has run once already)."""
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        fn()
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end) / 3, 1e-3)
    return int(min(max(trial_ms / estimate, min_launches), max_launches))


def time_gpu(fn, *, trials: int = 7, trial_ms: float = 3.0, min_launches: int = 5,
             max_launches: int = 1000, graph: bool = True) -> Timing:
    """Time ``fn`` (no arguments, launches GPU work) as the module docstring says."""
    fn()  # compile, allocate, warm the clocks
    launches = _launches_per_trial(fn, trial_ms, min_launches, max_launches)
    run, method = _capture(fn, launches) if graph else _eager(fn, launches)
    times = _trials(run, trials, launches)
    return Timing(statistics.median(times), min(times), max(times), launches, method)


@dataclass(frozen=True)
class Ratio:
    """``a ÷ b`` per-launch time, from trials that time both back to back."""

    median: float
    lo: float
    hi: float
    a: Timing
    b: Timing

    def spread(self) -> str:
        """``lo–hi`` of the per-trial ratios, for tables."""
        return f"{self.lo:.3f}–{self.hi:.3f}"


def _capture(fn, launches: int):
    """A replay callable for ``launches`` calls of ``fn`` (a CUDA graph, or an
    eager loop where capture fails) and its method label."""
    try:
        captured = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(captured):
            for _ in range(launches):
                fn()
        captured.replay()
        torch.cuda.synchronize()
        return captured.replay, f"graph of {launches}"
    except RuntimeError:
        torch.cuda.synchronize()
        return _eager(fn, launches)


def _eager(fn, launches: int):
    """An eager loop of ``launches`` calls, for what a graph cannot capture."""
    def run():
        for _ in range(launches):
            fn()
    return run, f"eager loop of {launches}"


def time_ratio(fn_a, fn_b, *, trials: int = 15, trial_ms: float = 3.0, min_launches: int = 5,
               max_launches: int = 1000) -> Ratio:
    """``fn_a`` ÷ ``fn_b`` timed interleaved: each trial flushes the L2 and
    replays A's graph, then flushes and replays B's (the order alternating
    between trials), so that clock and thermal drift fall on both alike. The
    result is the median of the per-trial ratios with their fastest and
    slowest beside it, and each side's own median timing."""
    fn_a(), fn_b()
    launches = _launches_per_trial(fn_b, trial_ms, min_launches, max_launches)
    run_a, method = _capture(fn_a, launches)
    run_b, _ = _capture(fn_b, launches)
    times_a, times_b = [], []
    for trial in range(trials):
        pair = ((run_a, times_a), (run_b, times_b))
        for run, times in (pair if trial % 2 == 0 else pair[::-1]):
            times.extend(_trials(run, 1, launches))
    ratios = [a / b for a, b in zip(times_a, times_b)]

    def timing(times):
        return Timing(statistics.median(times), min(times), max(times), launches, method)
    return Ratio(statistics.median(ratios), min(ratios), max(ratios), timing(times_a), timing(times_b))
