"""CPU-heavy work of the server (decompression, diagnosis, redaction, the evidence view) in a
pool of its own, off the event loop and off the thread pool that answers the light requests,
with a time budget per request and a bound on what may wait.

A request over its budget is answered 503 at once; its worker thread finishes in the
background (a thread cannot be stopped), still counted as busy until it does."""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor

from .errors import ApiError

DEFAULT_BUDGET_S = 120.0


class HeavyWork:
    def __init__(self, workers: int, budget_s: float = DEFAULT_BUDGET_S, max_waiting: int | None = None):
        self.workers = max(1, workers)
        self.budget_s = budget_s
        self.max_pending = self.workers + (max_waiting if max_waiting is not None else 4 * self.workers)
        self.pending = 0
        """Jobs queued or running, including those whose request already timed out. Only
        touched on the event loop."""
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="faultlens-heavy")

    async def run(self, fn, /, *args, **kwargs):
        """fn(*args, **kwargs) in the pool; 503 when the server is saturated or the budget runs out."""
        if self.pending >= self.max_pending:
            raise ApiError(503, "busy", f"the server is busy ({self.pending} diagnoses running or "
                                        "waiting); retry shortly", headers={"Retry-After": "5"})
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))
        self.pending += 1
        future.add_done_callback(self._done)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.budget_s)
        except asyncio.TimeoutError:
            future.add_done_callback(_consume)
            raise ApiError(503, "too_slow", f"this request needed more than its {self.budget_s:g} s "
                                            "budget; send a shorter log or its tail") from None

    def _done(self, _future) -> None:
        self.pending -= 1

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _consume(future) -> None:
    """Retrieve the result of a job nobody waits for any more (no 'never retrieved' warning)."""
    if not future.cancelled():
        future.exception()
