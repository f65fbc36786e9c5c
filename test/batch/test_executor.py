"""The batch executor: results in the items' order, one item's failure (an exception, or its
worker process dying) is that item's alone, and worker processes give the same bytes as
running in this process."""
from __future__ import annotations

import os

import numpy as np
import pytest

from sysid_ros.batch import BatchError, check_executor, run_tasks


def _solve(seed: int) -> bytes:
    """A least-squares solve whose bytes depend on every floating-point step."""
    if seed == 3:
        raise ValueError("item three is refused")
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(200, 40)), rng.normal(size=200)
    return np.linalg.lstsq(a, b, rcond=None)[0].tobytes()


def _dies(seed: int) -> int:
    if seed == 2:
        os._exit(9)          # a crash in native code, as far as the pool can tell
    return seed * seed


def test_order_errors_and_workers_match_in_process():
    serial = run_tasks(_solve, list(range(6)), jobs=1, show_progress=False)
    pooled = run_tasks(_solve, list(range(6)), jobs=2, show_progress=False)
    for outs in (serial, pooled):
        assert [o.index for o in outs] == list(range(6))
        assert [o.ok for o in outs] == [True, True, True, False, True, True]
        assert outs[3].value is None and "ValueError: item three is refused" in outs[3].error
    assert [o.value for o in serial] == [o.value for o in pooled]
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(200, 40)), rng.normal(size=200)
    assert np.allclose(np.frombuffer(pooled[5].value), np.linalg.lstsq(a, b, rcond=None)[0])


def test_a_dead_worker_fails_only_its_item():
    outs = run_tasks(_dies, list(range(5)), jobs=2, show_progress=False)
    assert [o.value for o in outs] == [0, 1, None, 9, 16]
    assert "worker process died" in outs[2].error


def test_on_done_sees_every_item_once():
    seen: list[int] = []
    run_tasks(_dies, [0, 1, 3, 4], jobs=2, show_progress=False,
              on_done=lambda o: seen.append(o.index))
    assert sorted(seen) == [0, 1, 2, 3]


@pytest.mark.parametrize("jobs, address, words", [
    (0, None, "--jobs"), (-2, None, "--jobs"), (1, " ", "--ray-address")])
def test_bad_executor_is_refused(jobs, address, words):
    with pytest.raises(BatchError, match=words):
        check_executor(jobs, address)
    with pytest.raises(BatchError, match=words):
        run_tasks(_dies, [1], jobs=jobs, ray_address=address, show_progress=False)
