"""The Methods page: its (parameter-free) spec, and the tables it shows, generated from the
chapters' specs and the verdict rules' docstrings so that the page cannot disagree with the
code that ran."""

from __future__ import annotations

import inspect
import re
from types import ModuleType

from .core.fmt import table
from .core.params import Param, Spec

METHODS = Spec(
    chapter="methods",
    params=[
        Param(
            "oc_models",
            int,
            "simulated models per step and noise correlation length (detector calibration)",
            min=10,
            max=100_000,
        ),
    ],
    profiles={"smoke": {"oc_models": 20}, "cpu": {"oc_models": 200}, "paper": {"oc_models": 1000}},
    packages=("paper_a", "paper_b", "methods"),
)


# The knobs that differ most between the profiles, per chapter.
KEY_KNOBS = {
    "a1_localization": ["seq_len", "depth", "steps", "lr", "seeds", "n_eval"],
    "a2_mechanism": ["pack_depth", "pack_steps", "pack_seeds", "n_test"],
    "a3_which_norms": ["seeds", "group_seeds", "group_counts", "bn_eval_batch_sizes"],
    "a4_stress": ["circular_steps", "intervention_eval", "decay_lens", "unet_steps",
                  "grid_steps"],
    "b1_setup_accuracy": ["seeds", "mnist_width", "vgg_width", "mnist_train", "cifar_train",
                          "mnist_epochs", "cifar_epochs"],
    "b3_clusters": ["cluster_images", "pca_components", "kmeans_n_init"],
}  # fmt: skip


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return ", ".join(_value(x) for x in v)
    return str(v)


def profile_table(specs: list[Spec], knobs: dict[str, list[str]]) -> str:
    """One row per (chapter, knob): its meaning and its value at each profile."""
    rows = []
    for spec in specs:
        for name in knobs.get(spec.chapter, []):
            p = spec.param(name)
            rows.append(
                {
                    "chapter": spec.chapter.split("_")[0].upper(),
                    "knob": f"`{name}`",
                    "meaning": p.doc,
                    **{
                        prof: _value(spec.profiles[prof][name])
                        for prof in ("smoke", "cpu", "paper")
                    },
                }
            )
    return table(rows)


def reconstruction_table(specs: list[Spec]) -> str:
    """Every knob marked as our reconstruction, the chapters that have it, and its `paper`
    profile value (the others are in each chapter's parameter table)."""
    seen: dict[str, dict] = {}
    for spec in specs:
        for p in spec.reconstructed():
            row = seen.setdefault(
                p.name,
                {
                    "knob": f"`{p.name}`",
                    "meaning": p.doc,
                    "chapters": [],
                    "paper value": _value(spec.profiles["paper"][p.name]),
                },
            )
            row["chapters"].append(spec.chapter.split("_")[0].upper())
    return table([{**r, "chapters": ", ".join(r["chapters"])} for r in seen.values()])


def _summary(doc: str) -> str:
    """A docstring as one line of prose (double-backtick code kept as code)."""
    text = " ".join(inspect.cleandoc(doc).split())
    return re.sub(r"``([^`]+)``", r"`\1`", text).replace("|", "\\|")


def rules_table(*modules: ModuleType) -> str:
    """Every verdict rule of the given modules: its name and its docstring."""
    rows = []
    for mod in modules:
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if fn.__module__ != mod.__name__ or name.startswith("_") or name.endswith("_ledger"):
                continue
            short = mod.__name__.removeprefix("normbook.")
            rows.append(
                {"rule": f"`{short}.{name}`", "what it decides": _summary(fn.__doc__ or "")}
            )
    return table(rows)
