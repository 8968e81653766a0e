"""The *Build and compute* page's paper-A part of "Where a network's time goes": one stack of
chapter A5's networks profiled, and the candidate speed-ups against today's step, from the
committed record of :mod:`normbook.tools.speed_a` (``results/<profile>/speed_a.json``)."""

from __future__ import annotations

from collections.abc import Callable

COMMAND = "python -m normbook.tools.speed_a"


def section(profile: str, load: Callable, table: Callable, machine_text: Callable):
    """The part's markdown and what is missing; ``load(profile, name)`` reads a committed record
    (None when there is none), ``table`` and ``machine_text`` are the page's own helpers."""
    sp = load(profile, "speed_a")
    head = "### Paper A: one stacked training\n\n"
    if sp is None:
        return head + "Not recorded for this profile.\n", [
            f"paper A's training profile: `{COMMAND} --profile {profile}`"
        ]
    wall = sp["phases_wall_s"]
    total = sum(wall.values())
    ev = sp["evaluation"]
    text = head + (
        f"Recorded by `{COMMAND}` on {machine_text(sp['machine'])}, {sp['started'][:10]}, one "
        f"thread, commit `{sp['commit'][:10]}`: {sp['network']}. {sp['steps']} steps profiled "
        f"with `torch.profiler`, each phase's wall time under the profiler ({total:.1f} s in "
        "all):\n\n"
    )
    rows = [(k, f"{v:.2f} s", f"{v / total:.0%}") for k, v in wall.items()]
    text += table(("phase", "seconds", "share of the steps"), rows) + "\n\n"
    ops = lambda top: ", ".join(f"`{o['op']}` {o['self_s']:.2f} s" for o in top[:4])  # noqa: E731
    text += (
        f"Its top operators by self time: {ops(sp['top_ops'])}. One evaluation of the stack "
        f"with depth probes on {ev['samples']:,} samples ({ev['probe_batches']} probe batches) "
        f"took {ev['wall_s']:.2f} s; its top operators: {ops(ev['top_ops'])}. Each candidate, "
        "milliseconds per training step, against today's step in the same run (best of "
        "interleaved rounds). None is the book's: each changes the last bits of every paper-A "
        "network, so adopting one retrains them all:\n\n"
    )
    rows = [(name, f"{r['ms_per_step']:.2f}", f"{r['speed_vs_today']:.2f}x")
            for name, r in sp["ratios"].items()]  # fmt: skip
    return text + table(("candidate", "ms per step", "speed vs today"), rows) + "\n", []
