"""Progress bars for long work, on stderr through tqdm.

A bar is drawn only when stderr is a terminal and the caller has not switched progress off
(``--no-progress``): logs, pipes and CI output never receive carriage returns or bar lines.
Every command shares these helpers, so the rule is the same everywhere.

- :func:`bar` — a bar over a known number of steps (items, stages, episodes);
- :func:`track` — an iterable with a bar counting its items (a benchmark's trials);
- :func:`callback` — a ``progress(done, total)`` callable for library functions that report
  their own counts (bag reading, identification), drawn only for inputs large enough to be
  worth a bar;
- :func:`stages` — a bar over the named stages of one long computation (calibration);
- :func:`write` — a line on stderr that does not break a bar;
- :func:`enabled` — whether bars are drawn at all (e.g. to choose between a bar and log lines).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from tqdm import tqdm

__all__ = ["bar", "track", "callback", "enabled", "stages", "write"]

T = TypeVar("T")


def enabled(requested: bool = True) -> bool:
    """Bars are drawn when requested and stderr is a terminal."""
    try:
        return bool(requested) and sys.stderr.isatty()
    except (AttributeError, ValueError):      # a replaced or closed stderr
        return False


def _width() -> dict[str, Any]:
    """Follow the terminal's width; one that reports none (0 columns) gets 80."""
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    return {"dynamic_ncols": True} if columns > 0 else {"ncols": 80}


def bar(total: int | None, desc: str, show: bool = True, unit: str = "it",
        **kwargs: Any) -> tqdm:
    """A tqdm bar on stderr over ``total`` steps, disabled unless :func:`enabled` (``show``)."""
    on = enabled(show)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=not on, **(_width() if on else {}), **kwargs)


def track(items: Iterable[T], desc: str, show: bool = True, total: int | None = None,
          unit: str = "it") -> Iterable[T]:
    """``items`` with a bar counting them (:func:`bar`'s rule)."""
    if not enabled(show):
        return items
    return tqdm(items, desc=desc, total=total, unit=unit, file=sys.stderr, leave=False,
                **_width())


def callback(desc: str, show: bool = True, min_total: int = 20_000, unit: str = "it"
             ) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """``(progress, close)``: ``progress(done, total)`` moves a bar created at the first call
    whose ``total`` reaches ``min_total`` (small inputs finish before a bar helps); ``close()``
    removes it."""
    state: dict[str, tqdm] = {}

    def progress(done: int, total: int) -> None:
        if total < min_total or not enabled(show):
            return
        b = state.get("bar")
        if b is None:
            b = state["bar"] = bar(total, desc, unit=unit)
        b.update(max(0, done - b.n))

    def close() -> None:
        b = state.pop("bar", None)
        if b is not None:
            b.close()

    return progress, close


@contextmanager
def stages(total: int, desc: str, show: bool = True) -> Iterator[Callable[[str], None]]:
    """A bar over ``total`` named stages: the yielded ``enter(name)`` counts the stage before it
    done and shows ``name`` as the one running; leaving the block closes the bar."""
    with bar(total, desc, show, unit="stage",
             bar_format="{desc}: {n_fmt}/{total_fmt} stages [{elapsed}] {postfix}") as b:
        started = [False]

        def enter(name: str) -> None:
            if started[0]:
                b.update(1)
            started[0] = True
            b.set_postfix_str(name, refresh=True)

        yield enter
        if started[0]:
            b.update(1)         # the last stage ended with the block


def write(line: str) -> None:
    """One line on stderr that does not break a bar being drawn."""
    tqdm.write(line, file=sys.stderr)
