"""A Kernel Tuner tuning budget on the simulated clock, for time-limited simulated runs.

Kernel Tuner's own `TuningBudget(time_limit=...)` adds wall-clock time since the run started to
the simulated evaluation time, so two runs with the same seed stop at different points. This
budget counts only the simulated time the runner charges (compile + verification + benchmark
time of first visits), which makes a time-limited run exactly reproducible.

It can also cap the number of proposals (repeats included). Repeated configurations cost no
simulated time, so a converged population that only re-proposes cached configurations would
otherwise never exhaust a time budget; in a real tuning session framework and strategy time
would end it. The cap stands in for that and is reported as its own stop reason.
"""

from __future__ import annotations

from datetime import timedelta

from kernel_tuner import util as kt_util

STOP_REASONS = ("max_fevals", "time_limit", "proposal_cap", "strategy")


class SimulatedTimeBudget(kt_util.TuningBudget):
    """TuningBudget whose clock is the simulated evaluation time only, with an optional proposal cap."""

    def __init__(self, time_limit_ms: float | None, max_fevals: int | None, max_proposals: int | None = None):
        super().__init__(None, max_fevals)
        if time_limit_ms is not None and time_limit_ms <= 0:
            raise ValueError(f"time_limit_ms must be positive, got {time_limit_ms}")
        if max_proposals is not None and max_proposals <= 0:
            raise ValueError(f"max_proposals must be positive, got {max_proposals}")
        self.time_limit = None if time_limit_ms is None else timedelta(milliseconds=time_limit_ms)
        self.max_proposals = max_proposals
        self.proposals = 0
        self.capped = False

    def get_time_spent(self) -> timedelta:
        """Simulated time charged so far (no wall clock)."""
        return self.time_spent_extra

    def is_done(self) -> bool:
        """Kernel Tuner's runners ask this once per proposed configuration: proposals are counted here."""
        self.proposals += 1
        if self.max_proposals is not None and self.proposals > self.max_proposals:
            self.capped = True
        return self.capped or super().is_done()

    def next_is_done(self) -> bool:
        """What the next `is_done()` will answer, without counting a proposal (changes nothing).

        Once true it stays true until something is charged, which a runner never does after a done
        answer (it skips the configuration): the engine uses it to leave such configurations unsnapped.
        """
        return (self.capped or (self.max_proposals is not None and self.proposals + 1 > self.max_proposals)
                or kt_util.TuningBudget.is_done(self))

    def raise_exception_if_done(self) -> None:
        """Stop the strategy once the cap is hit, as for the other limits."""
        if self.capped:
            raise kt_util.StopCriterionReached(f"proposal cap ({self.max_proposals}) reached")
        super().raise_exception_if_done()

    def stop_reason(self) -> str:
        """Why the run ended: a limit of this budget, or the strategy itself (its iterations ran out)."""
        if self.max_fevals is not None and self.num_fevals >= self.max_fevals:
            return "max_fevals"
        if self.time_limit is not None and self.get_time_spent() > self.time_limit:
            return "time_limit"
        if self.capped:
            return "proposal_cap"
        return "strategy"
