"""tqdm progress that stays readable in a terminal, a papermill log and a built page.

In a terminal: a live bar. Elsewhere (papermill, a notebook saved to HTML) the bar's redraws
go to stderr as a few separate lines, and when the loop ends one summary line follows them
there: ``train models: 20 in 7:12``. Everything goes to stderr, which papermill's log shows
live and the built book hides (``nb_output_stderr: remove``), so a page shows no progress at
all; what a chapter loaded or trained, it says once in its own words.
"""

from __future__ import annotations

import sys

try:
    from tqdm.std import tqdm
except ImportError:  # a bare GPU machine (torch, numpy, scipy): the paper-scale runner's
    tqdm = None


class _Lines:
    """Turn tqdm's carriage-return redraws into separate lines.

    Outside a terminal a redraw would pile up as one unreadable line; a few lines read like a
    log instead.
    """

    def __init__(self, stream):
        self.stream = stream

    def write(self, s: str) -> None:
        s = s.replace("\r", "").rstrip("\n")
        if s.strip():
            self.stream.write(s + "\n")

    def flush(self) -> None:
        self.stream.flush()


_IN_WORKER = [False]


def mark_worker() -> None:
    """In a worker process: no summary lines (the parent's loop over the jobs reports)."""
    _IN_WORKER[0] = True


def _plain(iterable, total, desc: str, summary: bool):
    """Without tqdm: the items, then the same one-line summary on stderr."""
    import time

    t0, n = time.perf_counter(), 0
    for item in iterable if iterable is not None else range(total or 0):
        n += 1
        yield item
    if summary and not _IN_WORKER[0]:
        took = time.perf_counter() - t0
        print(f"{desc or 'done'}: {n} in {took:.0f} s", file=sys.stderr, flush=True)


class _Summarized(tqdm or object):
    """A logged bar that writes one summary line to stderr when it closes."""

    summary = True  # False: an inner loop, whose enclosing loop reports for it

    def close(self) -> None:
        first = self.summary and not self.disable and not getattr(self, "_summarized", False)
        self._summarized = True
        super().close()
        if first:
            done = f"{self.n}" if self.total in (None, self.n) else f"{self.n} of {self.total}"
            took = self.format_interval(self.format_dict["elapsed"])
            print(f"{self.desc or 'done'}: {done} in {took}", file=sys.stderr, flush=True)


def progress(
    iterable=None, *, total=None, desc: str = "", every: float = 20.0, summary: bool = True
):
    """A tqdm bar; outside a terminal, a line on stderr at most every ``every`` seconds and
    (unless ``summary`` is False: an inner loop) a summary line on stderr at the end; nothing
    on stdout, so nothing in a built page."""
    if tqdm is None:
        return _plain(iterable, total, desc, summary)
    tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if tty:
        return tqdm(iterable, total=total, desc=desc, dynamic_ncols=True)
    bar = _Summarized(
        iterable,
        total=total,
        desc=desc,
        file=_Lines(sys.stderr),
        ascii=True,
        ncols=88,
        mininterval=every,
        maxinterval=every * 3,
    )
    bar.summary = summary and not _IN_WORKER[0]
    return bar
