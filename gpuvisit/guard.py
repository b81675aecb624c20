"""The deadline guard of a visit: start nothing (a kernel, a batch, a configuration) that would end after the
stop time, Kernel Tuner's budget consulting it before each configuration, and the watchdog that ends a
process still alive after packing."""

from __future__ import annotations

import contextlib
import faulthandler
import sys
from collections.abc import Callable
from typing import Any

from kernel_tuner import util

RESERVE_S = 60.0  # seconds kept free before the deadline for packing
EXIT_WATCHDOG_S = 60.0  # after a lease has packed, the process must be gone within this many seconds


class DeadlineReached(Exception):
    """The next configuration would end after the lease's stop time."""


class Guard:
    """The lease's stop rule: start nothing (a kernel, a batch, a configuration) that would end after `stop_at`.

    `check()` is called before every configuration (Kernel Tuner's budget asks it); the time between two such
    calls within a batch is a configuration's duration, and the next one is estimated as twice the longest of
    the last 20 (`first_estimate` before any). What surrounds the configurations is timed too: a kernel's
    set-up (`begin_kernel()` to its first batch: reference, gate, inputs), a batch's set-up (`begin_batch()` to
    its first configuration: Kernel Tuner's search space and device interface) and a batch's tail (its last
    check to `end_batch()`: the last configuration, the cache, the observers). Each is estimated as the longest
    seen, and a step starts only with room for itself and everything that must follow it before the batch can
    end: a configuration needs a tail, a batch its set-up and a configuration, a kernel its set-up and a batch.
    """

    STAGES = ("kernel", "batch", "tail")

    def __init__(self, clock: Callable[[], float], stop_at: float, first_estimate: float = 2.0):
        self.clock = clock
        self.stop_at = stop_at
        self.first_estimate = first_estimate
        self.recent: list[float] = []
        self.spans: dict[str, list[float]] = {s: [] for s in self.STAGES}
        self.last: float | None = None
        self.began: dict[str, float] = {}
        self.stopped = False

    def estimate(self) -> float:
        return 2.0 * max(self.recent[-20:]) if self.recent else self.first_estimate

    def longest(self, stage: str) -> float:
        return max(self.spans[stage][-20:], default=0.0)

    def left(self) -> float:
        return self.stop_at - self.clock()

    def record(self) -> dict[str, Any]:
        """The stop rule and what it measured, for the provenance."""
        return {"rule": "start a step only with room for the longest set-up and tail seen and twice the longest of "
                        "the last 20 configurations", "configuration_s": round(max(self.recent, default=0.0), 3),
                "kernel_setup_s": round(max(self.spans["kernel"], default=0.0), 3),
                "batch_setup_s": round(max(self.spans["batch"], default=0.0), 3),
                "batch_tail_s": round(max(self.spans["tail"], default=0.0), 3)}

    def _ask(self, now: float, need: float, what: str) -> None:
        if self.stopped or now + need > self.stop_at:
            self.stopped = True
            raise DeadlineReached(f"{self.stop_at - now:.1f} s left, {what} estimated at {need:.2f} s")

    def begin_kernel(self) -> None:
        """Before a kernel's set-up: room for it, a batch's set-up, a configuration and a tail."""
        now = self.clock()
        self._ask(now, self.longest("kernel") + self.longest("batch") + self.estimate() + self.longest("tail"),
                  "the next kernel's set-up and first configuration")
        self.began = {"kernel": now}
        self.last = None

    def begin_batch(self) -> None:
        """Before a batch (a tune_kernel call): room for its set-up, a configuration and a tail."""
        now = self.clock()
        if "kernel" in self.began:  # the kernel's set-up ends where its first batch begins
            self.spans["kernel"].append(now - self.began.pop("kernel"))
        self._ask(now, self.longest("batch") + self.estimate() + self.longest("tail"),
                  "the next batch's set-up and first configuration")
        self.began["batch"] = now
        self.last = None

    def end_batch(self) -> None:
        now = self.clock()
        if self.last is not None:
            self.spans["tail"].append(now - self.last)
        self.began.pop("batch", None)
        self.last = None

    def new_batch(self) -> None:
        """The same batch measured again (e.g. without energy): its configurations' timing starts afresh."""
        self.last = None

    def check(self) -> None:
        """Before a configuration: room for it and a batch's tail."""
        now = self.clock()
        if "batch" in self.began:  # the batch's set-up ends at its first configuration
            self.spans["batch"].append(now - self.began.pop("batch"))
        elif self.last is not None:
            self.recent.append(now - self.last)
            del self.recent[:-100]
        self.last = now
        self._ask(now, self.estimate() + self.longest("tail"), "the next configuration and the batch's tail")


@contextlib.contextmanager
def deadline_budget(guard: Guard):
    """While active, Kernel Tuner's tuning budget consults `guard` before each configuration.

    Kernel Tuner's runner asks `budget.is_done()` before every configuration; raising there stops the
    `tune_kernel` call between two configurations, with every finished one in its cache.
    """
    original = util.TuningBudget

    class DeadlineBudget(original):  # type: ignore[misc, valid-type]
        def is_done(self):
            guard.check()
            return super().is_done()

    util.TuningBudget = DeadlineBudget
    try:
        yield
    finally:
        util.TuningBudget = original


def exit_watchdog(seconds: float = EXIT_WATCHDOG_S) -> None:
    """After a lease has packed: if the process has not exited `seconds` later (a worker, a thread or a device
    library holding it up), print every thread's stack to stderr and end it (faulthandler), so that a visit's
    next steps run and what held it up is in the visit's log."""
    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.stderr)
