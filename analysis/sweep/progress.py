"""Progress of a long sweep shard: configurations done / total, rate and time left, logged at least once a minute.

Kernel Tuner calls every benchmark observer's `register_configuration` before it benchmarks
a configuration and `get_results` after; it benchmarks the first configuration of each
`tune_kernel` call twice (a warm-up). The observer made by `observer()` counts each
distinct configuration once, at its first `get_results`, and logs through
`analysis.sweep.progress` whenever `interval_s` has passed since the last line (and for the
last configuration). Configurations already in a resumed shard's cache count as done.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

log = logging.getLogger(__name__)
INTERVAL_S = 60.0


@dataclass
class Progress:
    """Counts of one shard; `tick()` after each measured configuration."""

    label: str
    total: int
    done: int = 0
    interval_s: float = field(default_factory=lambda: INTERVAL_S)
    measured: int = 0
    seen: set = field(default_factory=set)
    started: float = field(default_factory=lambda: time.monotonic())
    last: float = field(default_factory=lambda: time.monotonic())

    def tick(self) -> None:
        """One more configuration measured; log when the interval has passed or the shard is complete."""
        self.done += 1
        self.measured += 1
        now = time.monotonic()
        if now - self.last >= self.interval_s or self.done >= self.total:
            self.last = now
            log.info("%s", self.line(now))

    def line(self, now: float | None = None) -> str:
        """`label: done/total configurations (pct), rate /s, about T left`."""
        now = time.monotonic() if now is None else now
        elapsed = max(now - self.started, 1e-9)
        rate = self.measured / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (f"{self.label}: {self.done}/{self.total} configurations ({pct:.1f} %), "
                f"{rate:.2f} configurations/s, about {_duration(left)} left")


def _duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "unknown time"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min {s:02d} s"


def observer(progress: Progress):
    """A Kernel Tuner benchmark observer that ticks `progress` once per benchmarked configuration."""
    from kernel_tuner.observers.observer import BenchmarkObserver

    class ProgressObserver(BenchmarkObserver):
        current = None

        def register_configuration(self, params):
            self.current = tuple(sorted((k, str(v)) for k, v in params.items()))

        def get_results(self):
            if self.current is not None and self.current not in progress.seen:
                progress.seen.add(self.current)
                progress.tick()
            return {}

    return ProgressObserver()
