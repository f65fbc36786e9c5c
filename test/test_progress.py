"""The progress helpers: bars on a tty_stderr only, never with progress switched off, stage bars
naming the running stage, count callbacks only for inputs large enough."""
from __future__ import annotations

import io

from sysid_ros._src import progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _tty(monkeypatch) -> _Terminal:
    """stderr as a terminal; set in the test's body (pytest's capture replaces a stderr set
    by a fixture before the test runs)."""
    stream = _Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    return stream


def test_stages_name_each_stage_and_end_complete(monkeypatch):
    tty_stderr = _tty(monkeypatch)
    with progress.stages(3, "calibrating") as enter:
        for name in ("rows", "noise bound", "friction box"):
            enter(name)
    out = tty_stderr.getvalue()
    assert "calibrating" in out and "noise bound" in out and "friction box" in out
    assert "2/3 stages" in out and out.endswith("\r")     # drawn in place, then cleared


def test_callback_draws_only_for_large_inputs(monkeypatch):
    tty_stderr = _tty(monkeypatch)
    bar, done = progress.callback("reading", unit="msg")
    bar(50, 100)                       # small input: no bar
    done()
    assert tty_stderr.getvalue() == ""
    bar, done = progress.callback("reading", unit="msg")
    for k in range(10_000, 40_001, 10_000):
        bar(k, 40_000)
    done()
    out = tty_stderr.getvalue()
    assert "\rreading:" in out and "/40000" in out and "msg" in out


def test_nothing_when_switched_off_or_not_a_terminal(monkeypatch):
    tty_stderr = _tty(monkeypatch)
    with progress.stages(2, "off", show=False) as enter:
        enter("a")
    for _ in progress.track(range(3), "off", show=False):
        pass
    assert tty_stderr.getvalue() == ""
    pipe = io.StringIO()
    monkeypatch.setattr("sys.stderr", pipe)
    with progress.bar(3, "piped") as b:
        b.update(3)
    assert list(progress.track([1, 2], "piped")) == [1, 2]
    progress.write("a line")
    assert pipe.getvalue() == "a line\n"
