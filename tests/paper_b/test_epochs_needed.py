"""tools/epochs_needed: trains the cells asked for on seeds the book does not use, and records
what ended each network; refuses the book's own seeds and unknown cells before training."""

from __future__ import annotations

import json

import pytest

from normbook.tools import epochs_needed


def test_one_cell_is_trained_and_recorded_with_what_ended_it(tmp_path):
    out = tmp_path / "epochs.json"
    epochs_needed.main(["--profile", "smoke", "--seeds", "7", "--cap", "1", "--workers", "1",
                        "--cells", "mnist-bn-0.01", "--out", str(out)])  # fmt: skip
    rec = json.loads(out.read_text())
    (net,) = rec["networks"]
    assert (net["dataset"], net["batchnorm"], net["seed"], net["cap"]) == ("mnist", True, 7, 1)
    assert net["ended_by"] in ("early stopping", "the cap") and net["stopped_epoch"] <= 1
    assert rec["machine"]["cpu"] and rec["commit"]


@pytest.mark.parametrize(
    "argv, error",
    [(["--seeds", "0"], "are the book's seeds"), (["--cells", "mnist-bn-9"], "no cell named")],
)
def test_bad_input_is_refused_before_training(tmp_path, argv, error):
    with pytest.raises(SystemExit, match=error):
        epochs_needed.main(["--profile", "smoke", "--seeds", "7", "--out",
                            str(tmp_path / "x.json"), *argv])  # fmt: skip
