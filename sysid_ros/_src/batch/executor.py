"""One executor for every batch: local worker processes by default, a Ray cluster on request.

``run_tasks(fn, items, jobs=N)`` calls ``fn(item)`` for every item on ``N`` worker processes
(``N == 1``: in this process, one after another); ``ray_address`` sends the same calls to a Ray
cluster instead (``"auto"``: join the running cluster; ``"local"``: start one on this machine,
bound to 127.0.0.1, and stop it afterwards; any other value is the address of a head, refused
at once when nothing accepts a connection there, where Ray would wait for ever). ``fn``
must be a module-level function of an importable module, and items and results plain picklable
values; the results come back in the items' order whichever executor ran them, so the same
inputs give the same outputs.

An exception in one item is caught where it was raised and returned as that item's error
(``Outcome.error``: its type and message); the other items go on. An item whose worker process
dies (killed, out of memory, a crash in native code) fails with that reason, and only that item.

Every item runs with its numerical libraries' thread pools (BLAS, OpenMP) limited to one
thread, in this process, a worker process or on Ray alike: items run side by side, one per
core, and an item's extra threads would only compete for the cores of the others (on 2 cores,
two items with two BLAS threads each run slower than one after another). The same thread count
everywhere also keeps results independent of the executor. A worker process sets the limit
once, when it starts; this process sets it for the batch and restores it afterwards.

Ray is imported only when ``ray_address`` is given: the local path needs no cluster. Local
workers are forked from this process, so they start without importing anything again; what
every item loads on first use (``warm``) is loaded here once, before the fork, instead of once
in every worker. Items with a ``cost`` start largest first (on either executor), so that a
long item does not start last while the other workers have nothing left to do.
"""
from __future__ import annotations

import gc
import ipaddress
import logging
import multiprocessing
import os
import socket
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from threadpoolctl import threadpool_limits

from sysid_ros._src import progress
from sysid_ros._src.errors import SysidError

__all__ = ["BatchError", "Outcome", "run_tasks", "check_executor", "describe_executor",
           "executor_fields", "local_ray_head"]

T = TypeVar("T")
R = TypeVar("R")

class BatchError(SysidError, ValueError):
    """The batch cannot run as asked (bad ``jobs``, unreachable Ray cluster)."""


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """One item's result: ``value`` when it finished, else ``error`` (``"Type: message"``);
    ``seconds`` is the item's wall time where it ran."""

    index: int
    value: R | None
    error: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None


def check_executor(jobs: int, ray_address: str | None) -> None:
    """Raise BatchError for a ``jobs`` < 1 or an empty ``ray_address``."""
    if not isinstance(jobs, int) or jobs < 1:
        raise BatchError(f"--jobs must be an integer >= 1, got {jobs!r}")
    if ray_address is not None and not ray_address.strip():
        raise BatchError("--ray-address is empty; use auto, local or HOST:PORT")


_one_thread_set = False


def _one_thread() -> None:
    """One thread for BLAS/OpenMP in this worker process from now on (set once per process:
    looking up the loaded libraries again for every item costs time that serves nothing)."""
    global _one_thread_set
    if not _one_thread_set:
        threadpool_limits(limits=1)
        _one_thread_set = True


def _call(fn: Callable[[T], R], index: int, item: T) -> Outcome[R]:
    """Run one item, turning its exception into its error (in the worker; the caller has
    limited the thread pools)."""
    clock = time.perf_counter()
    try:
        value = fn(item)
    except Exception as err:          # one item's failure is its result, not the batch's
        last = traceback.extract_tb(err.__traceback__)[-1:]
        where = f" (at {last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
        return Outcome(index, None, f"{type(err).__name__}: {err}{where}",
                       time.perf_counter() - clock)
    return Outcome(index, value, None, time.perf_counter() - clock)


def _ray_call(fn: Callable[[T], R], index: int, item: T) -> Outcome[R]:
    """:func:`_call` in a Ray worker process."""
    _one_thread()
    return _call(fn, index, item)


def run_tasks(fn: Callable[[T], R], items: Sequence[T], *, jobs: int = 1,
              ray_address: str | None = None, desc: str = "items", show_progress: bool = True,
              on_done: Callable[[Outcome[R]], None] | None = None,
              cost: Callable[[T], float] | None = None,
              warm: Callable[[], None] | None = None,
              is_ok: Callable[[Outcome[R]], bool] | None = None) -> list[Outcome[R]]:
    """``fn`` over ``items`` (module docstring); one :class:`Outcome` per item, in order.

    A progress bar on stderr counts items done / total, the items not ok so far and the
    remaining time (terminal only; ``show_progress`` False: never). An item is ok when
    ``is_ok(outcome)`` (default: it raised nothing); a command whose items finish with a
    verdict passes its own rule, the one its summary and exit code use. ``on_done`` is called
    in this process as each item finishes (e.g. to write its result at once). ``cost(item)``:
    the item's expected work in any unit (e.g. its recording's size); larger items start
    first. ``warm()``: loads
    what every item needs, called here before local workers are forked (an exception in it is
    left for the items to meet and report).
    """
    check_executor(jobs, ray_address)
    outcomes: list[Outcome[R] | None] = [None] * len(items)
    order = list(range(len(items)))
    if cost is not None:
        order.sort(key=lambda i: -cost(items[i]))      # stable: equal costs keep their order
    with progress.bar(len(items), desc, show_progress, unit="item") as b:
        not_ok = 0
        stream = (_ray(fn, items, order, jobs, ray_address) if ray_address is not None
                  else _local(fn, items, order, jobs, warm))
        for out in stream:
            outcomes[out.index] = out
            ok = out.ok if is_ok is None else is_ok(out)
            not_ok += not ok
            if on_done is not None:
                on_done(out)
            b.set_postfix({"not ok": not_ok}, refresh=False)
            b.update(1)
            if not ok:        # shown at once, even when the bar would wait to redraw
                b.refresh()
    assert all(o is not None for o in outcomes)
    return [o for o in outcomes if o is not None]


def _local(fn: Callable[[T], R], items: Sequence[T], order: Sequence[int], jobs: int,
           warm: Callable[[], None] | None) -> Iterator[Outcome[R]]:
    if jobs == 1 or len(items) <= 1:
        with threadpool_limits(limits=1):
            for i, item in enumerate(items):
                yield _call(fn, i, item)
        return
    if warm is not None:
        with suppress(Exception):     # the items meet the same problem and report it each
            warm()
    # fork: the workers inherit every module imported here instead of importing them again
    # (about a second each, as long as a short item); a Ray worker imports them once
    ctx = multiprocessing.get_context("fork")
    unfinished: list[int] = []
    # everything loaded so far is left out of the workers' garbage collections: a collection
    # that walks the inherited objects writes to them, and each page written is copied
    gc.freeze()
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=ctx,
                                 initializer=_one_thread) as pool:
            futures: dict[Future[Outcome[R]], int] = {
                pool.submit(_call, fn, i, items[i]): i for i in order}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    try:
                        yield f.result()
                    except BrokenProcessPool:
                        unfinished.append(futures[f])
        # A dead worker breaks the whole pool: the items it left unfinished run again one at a
        # time, each in a process of its own, so that only the item that kills its process fails.
        for i in sorted(unfinished):
            with ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_one_thread) as alone:
                try:
                    yield alone.submit(_call, fn, i, items[i]).result()
                except BrokenProcessPool:
                    yield Outcome(i, None, "the worker process died while running this item "
                                           "(killed, out of memory or a crash in native code)", 0.0)
    finally:
        gc.unfreeze()


#: Ray reads this when it is imported: off, a node started here takes 127.0.0.1 as its
#: address, and every server of the cluster listens on the loopback interface only (on, it
#: would take the machine's network address even when asked for 127.0.0.1)
_RAY_NETWORK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _on_loopback(address: str) -> bool:
    """Whether ``HOST:PORT`` names this machine's loopback interface (127.x.x.x, ::1,
    localhost)."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def _loopback_ray() -> Iterator[None]:
    """Ray kept on the loopback interface for the ``with`` block: a node started here takes
    127.0.0.1 as its address, and a driver joining 127.0.0.1:PORT connects there (otherwise
    Ray swaps a loopback address for the machine's network address, where a loopback-only head
    does not listen, and waits for it)."""
    from ray._private import ray_constants

    before = os.environ.get(_RAY_NETWORK_SWITCH), ray_constants.ENABLE_RAY_CLUSTER
    # processes started here inherit the environment; this process reads the constant
    os.environ[_RAY_NETWORK_SWITCH] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if before[0] is None:
            os.environ.pop(_RAY_NETWORK_SWITCH, None)
        else:
            os.environ[_RAY_NETWORK_SWITCH] = before[0]
        ray_constants.ENABLE_RAY_CLUSTER = before[1]


@contextmanager
def local_ray_head(num_cpus: int) -> Iterator[str]:
    """A Ray head on this machine for the ``with`` block, reachable from this machine only
    (every server bound to 127.0.0.1), with ``num_cpus`` CPUs, without dashboard or usage
    statistics and quiet on stderr; yields its address (``127.0.0.1:PORT``) and stops it at
    the end. This process is its driver."""
    import ray

    # a cluster started here reports nothing to the outside (Ray's usage statistics)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with _loopback_ray():
        # Ray's start-up notices would fill the command's stderr; its errors still show
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False,
                 _node_ip_address="127.0.0.1", log_to_driver=False,
                 logging_level=logging.ERROR)
        try:
            yield str(ray.get_runtime_context().gcs_address)
        finally:
            ray.shutdown()


#: seconds to wait for a cluster's head to accept a connection before giving up on it (Ray
#: itself would retry for ever)
JOIN_TIMEOUT_S = 5.0


def _check_reachable(address: str) -> None:
    """BatchError unless something accepts a TCP connection at ``address`` (``HOST:PORT``,
    optionally ``ray://HOST:PORT``) within :data:`JOIN_TIMEOUT_S`."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise BatchError(f"--ray-address {address}: expected auto, local or HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=JOIN_TIMEOUT_S).close()
    except OSError as err:
        why = (f"no answer within {JOIN_TIMEOUT_S:g} s" if isinstance(err, TimeoutError)
               else (err.strerror or str(err)).lower())
        raise BatchError(f"--ray-address {address}: no Ray cluster there ({why}); start its "
                         "head first, or use --ray-address local") from None


def _ray(fn: Callable[[T], R], items: Sequence[T], order: Sequence[int], jobs: int,
         address: str) -> Iterator[Outcome[R]]:
    if address not in ("auto", "local"):
        _check_reachable(address)
    import ray

    if ray.is_initialized():
        yield from _ray_tasks(ray, fn, items, order)
    elif address == "local":
        with ExitStack() as head:
            try:
                head.enter_context(local_ray_head(jobs))
            except (ConnectionError, ValueError, RuntimeError) as err:
                raise BatchError(f"--ray-address local: cannot start a Ray head: "
                                 f"{' '.join(str(err).split())}") from None
            yield from _ray_tasks(ray, fn, items, order)
    else:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        with ExitStack() as join:
            if _on_loopback(address):
                join.enter_context(_loopback_ray())
            try:
                ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            except (ConnectionError, ValueError, RuntimeError) as err:
                raise BatchError(f"--ray-address {address}: cannot join a Ray cluster: "
                                 f"{' '.join(str(err).split())}") from None
            try:
                yield from _ray_tasks(ray, fn, items, order)
            finally:
                ray.shutdown()


def _ray_tasks(ray: Any, fn: Callable[[T], R], items: Sequence[T],
               order: Sequence[int]) -> Iterator[Outcome[R]]:
    remote: Any = ray.remote(num_cpus=1, max_retries=0)(_ray_call)
    refs = {remote.remote(fn, i, items[i]): i for i in order}
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            try:
                yield ray.get(ref)
            except ray.exceptions.RayError as err:
                yield Outcome(refs[ref], None, f"Ray task failed: "
                              f"{' '.join(str(err).split())[:500]}", 0.0)


def describe_executor(jobs: int, ray_address: str | None) -> str:
    """A short description for logs and summaries: ``"2 local workers"``, ``"Ray (local)"``."""
    if ray_address is not None:
        return f"Ray ({ray_address})"
    return "in-process" if jobs == 1 else f"{jobs} local worker processes"


def executor_fields(jobs: int, ray_address: str | None) -> dict[str, Any]:
    """The executor as recorded in a summary (a timing-like field: not part of results)."""
    return {"jobs": jobs, "ray_address": ray_address,
            "executor": describe_executor(jobs, ray_address)}
