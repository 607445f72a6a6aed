"""Run `worker.scan_job` over many jobs: a local process pool, or a Dask distributed cluster.

Both yield each job's row exactly once, in completion order. Workers receive the job (its paths
or URLs), read the logs themselves and send back only the row.

- Local: a `ProcessPoolExecutor` with one process per core. If a pool process dies (killed, out
  of memory), the pool is broken: the jobs that had not finished run again in a fresh pool, at
  most POOL_ATTEMPTS times in all, then get a row whose `error` says so.
- Dask: `Client.map` with pure tasks. When a worker is lost, the scheduler reruns its tasks on the
  others; a task that keeps killing workers ends as KilledWorker and gets an error row.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from ..errors import UsageError
from .jobs import Job
from .row import new_row
from .worker import scan_job

POOL_ATTEMPTS = 3


def _error_row(job: Job, reason: str) -> dict:
    row = new_row(job.name, job.files)
    row["error"] = reason
    return row


def scan_local(jobs: list[Job], catalogue: str | None = None, workers: int | None = None,
               for_store: bool = False) -> Iterator[dict]:
    """Rows of `jobs` from a local process pool of `workers` processes (default: one per core);
    `catalogue` and `for_store` are passed to `worker.scan_job`."""
    pending = {job.name: job for job in jobs}
    size = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    # spawn: the parent may hold threads (a progress bar), which fork does not copy safely
    context = multiprocessing.get_context("spawn")
    for _ in range(POOL_ATTEMPTS):
        if not pending:
            return
        pool = ProcessPoolExecutor(max_workers=size, mp_context=context,
                                   initializer=_ignore_interrupts)
        try:
            futures = {pool.submit(scan_job, job, catalogue, for_store): job
                       for job in pending.values()}
            for future in as_completed(futures):
                if isinstance(future.exception(), BrokenProcessPool):
                    continue  # a pool process died: this job runs again in the next pool
                job = futures[future]
                del pending[job.name]
                yield future.result()
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    for job in pending.values():
        yield _error_row(job, f"a worker process died while scanning this job "
                              f"({POOL_ATTEMPTS} attempts)")


def _ignore_interrupts() -> None:
    """Ctrl-C reaches the whole process group: only the parent handles it (and stops the pool)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def connect(address: str, workers: int | None = None, timeout: float = 60.0):
    """A Dask client for the scheduler at `address`; with `workers`, wait until that many joined."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask distributed",
                         tip="pip install 'faultlens[fleet]'") from None
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}",
                         tip="check the address (tcp://HOST:8786) and that the scheduler runs") from None
    if workers:
        client.wait_for_workers(workers, timeout=timeout)
    return client


def submit(jobs: list[Job], client, catalogue: str | None = None, for_store: bool = False) -> list:
    """One pure Dask task per job (its key is a hash of the job): the futures, in job order."""
    return client.map(scan_job, jobs, catalogue=catalogue, for_store=for_store, pure=True)


def gather(futures: list, jobs: list[Job]) -> Iterator[dict]:
    """The row of each future as it completes, once per job; a task that failed on the cluster
    (KilledWorker after repeated worker deaths) becomes an error row."""
    from distributed import as_completed as dask_as_completed

    job_of = {future.key: job for future, job in zip(futures, jobs)}
    done: set = set()
    for future, result in dask_as_completed(futures, with_results=True, raise_errors=False):
        if future.key in done:
            continue
        done.add(future.key)
        if future.status == "error":
            exc = result[1]
            yield _error_row(job_of[future.key],
                             f"the task failed on the cluster: {type(exc).__name__}: {exc}")
        else:
            yield result
        future.release()  # the row is here: the cluster can forget it


def scan_dask(jobs: list[Job], client, catalogue: str | None = None,
              for_store: bool = False) -> Iterator[dict]:
    """Rows of `jobs` computed on the cluster behind `client`."""
    return gather(submit(jobs, client, catalogue, for_store), jobs)


@contextlib.contextmanager
def progress_bar(total: int, enabled: bool | None = None) -> Iterator[Callable[[dict], None]]:
    """A rich progress bar on stderr (when it is a terminal); yields `advance(row)`."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    try:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )
    except ImportError:
        enabled = False
    if not enabled:
        yield lambda row: None
        return
    columns = (TextColumn("scan"), BarColumn(), MofNCompleteColumn(), TextColumn("jobs"),
               TimeRemainingColumn(), TextColumn("{task.fields[failed]} unreadable"))
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("scan", total=total, failed=0)
        failed = 0

        def advance(row: dict) -> None:
            nonlocal failed
            failed += 1 if row["error"] else 0
            progress.update(task, advance=1, failed=failed)

        yield advance
