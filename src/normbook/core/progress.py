"""tqdm progress that stays readable in a terminal, a papermill log and a built page."""

from __future__ import annotations

import sys

from tqdm.std import tqdm


class _Lines:
    """Turn tqdm's carriage-return redraws into separate lines.

    Outside a terminal (papermill, a notebook saved to HTML) a redraw would pile up as
    one unreadable line; a few timestamped lines read like a log instead.
    """

    def __init__(self, stream):
        self.stream = stream

    def write(self, s: str) -> None:
        s = s.replace("\r", "").rstrip("\n")
        if s.strip():
            self.stream.write(s + "\n")

    def flush(self) -> None:
        self.stream.flush()


def progress(iterable=None, *, total=None, desc: str = "", every: float = 20.0):
    """A tqdm bar; outside a terminal it prints one line at most every ``every`` seconds."""
    tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if tty:
        return tqdm(iterable, total=total, desc=desc, dynamic_ncols=True)
    return tqdm(
        iterable,
        total=total,
        desc=desc,
        file=_Lines(sys.stdout),
        ascii=True,
        ncols=88,
        mininterval=every,
        maxinterval=every * 3,
    )
