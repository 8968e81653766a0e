"""Chapters A2 and A3 derive their settings from A1; bad values give one-line errors."""

import pytest

from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.a2_mechanism.spec import A2
from normbook.paper_a.a3_which_norms.spec import A3
from normbook.paper_a.a4_stress.spec import A4
from normbook.runtime.params import ParameterError


def test_a2_a3_derive_their_localization_settings_from_a1():
    for profile in ("smoke", "cpu", "paper"):
        a1, a2, a3 = A1.resolve(profile), A2.resolve(profile), A3.resolve(profile)
        for name in A1.names:  # the multi-hop section reuses A1's models
            if name != "paper_record":  # A1's own: the recorded run it reads
                assert a2[name] == a1[name], (profile, name)
        for name in (
            "kernel",
            "width",
            "steps",
            "lr",
            "batch_size",
            "alpha",
            "seeds",
            "n_eval",
            "eval_batch_size",
            "distance_window",
            "distance_threshold",
            "probe_batches",
        ):
            assert a3[name] == a1[name], (profile, name)
        assert a3.width in a3.group_counts  # G = C, the InstanceNorm control
    # A3's geometry is A1's at every profile, so A1's none/InstanceNorm models are reused;
    # the GroupNorm sweep's seeds are among them.
    for profile in ("smoke", "cpu", "paper"):
        a1, a3 = A1.resolve(profile), A3.resolve(profile)
        assert (a3.seq_len, a3.depth) == (a1.seq_len, a1.depth)
        assert set(a3.group_seeds) <= set(a3.seeds)
    # five paired seeds at 'cpu': the smallest one-sided sign-flip p (1/32) is below 0.05
    assert len(A1.resolve("cpu").seeds) >= 5


@pytest.mark.parametrize(
    "spec,overrides,match",
    [
        (A2, {"overlap_fracs": [0.0, 1.5]}, "parameter 'overlap_fracs'"),
        (A2, {"pack_kernel": 4}, "parameter 'pack_kernel': must be odd"),
        (A2, {"pack_head": "max"}, "parameter 'pack_head': must be one of"),
        (A2, {"hop_factor": 1.0}, "parameter 'hop_factor': must be > 1"),
        (A2, {"n_test": 3}, "parameter 'n_test'"),
        (A2, {"pack_seeds": []}, "parameter 'pack_seeds'"),
        (A2, {"transition_level": 0.3}, "parameter 'transition_level'"),
        (A3, {"group_counts": [1, 3]}, "parameter 'group_counts': every G must divide width=32"),
        (A3, {"bn_eval_batch_sizes": [8, 40000]}, "parameter 'bn_eval_batch_sizes'"),
        (A3, {"norm": "batch"}, "unknown parameter 'norm'"),
        (A3, {"seq_len": 16}, "parameter 'depth': receptive-field radius R"),
        (A4, {"unet_kernel": 2}, r"parameters 'unet_\*' \(U-Net\): unet_kernel must be odd"),
    ],
)
def test_a2_a3_bad_parameters_give_a_one_line_error(spec, overrides, match):
    with pytest.raises(ParameterError, match=match) as err:
        spec.resolve("cpu", **overrides)
    assert "\n" not in str(err.value)
