"""Within each experiment, no two random streams of any profile's models coincide."""

import torch

from normbook.paper_a.runs import packnorm
from normbook.publish.chapters import SPECS
from normbook.runtime import seeding


def _streams(profile):
    """The stream seeds of each family of models at one profile, keyed by what they draw."""
    seeds = set(SPECS["a1_localization"].resolve(profile).seeds)
    seeds |= set(SPECS["a3_which_norms"].resolve(profile).seeds)
    cnn = {(s, st): seeding.stream_seed(s, st) for s in seeds
           for st in ("train", "probe_fit", "eval", "check")}  # fmt: skip
    params = SPECS["a2_mechanism"].resolve(profile)
    setup = packnorm.PackSetup.from_params(params)
    pack = {(s, o, st): seeding.stream_seed(s, st, salt=o * 7_919) for s in params.pack_seeds
            for o in set(setup.overlaps + setup.control_overlaps)
            for st in ("train", "eval", "check")}  # fmt: skip
    params = SPECS["b1_setup_accuracy"].resolve(profile)
    classifiers = {
        (s, st): seeding.stream_seed(s, st) for s in params.seeds for st in ("order", "init")
    }
    return cnn, pack, classifiers


def test_streams_of_every_profile_are_distinct():
    for profile in ("smoke", "cpu", "paper"):
        for family in _streams(profile):  # separate experiments may share a stream harmlessly
            values = list(family.values())
            assert len(set(values)) == len(values), profile


def test_the_check_would_see_a_collision():
    # a salt as large as the stride makes two seeds share a stream: what the test above catches
    clash = seeding.stream_seed(1, "train", salt=0) - seeding.stream_seed(0, "train")
    assert clash == 1_000_003 and seeding.stream_seed(
        0, "train", salt=clash
    ) == seeding.stream_seed(1, "train")


def test_generator_is_the_stream_seed():
    a = seeding.generator(3, "eval", salt=5)
    assert a.initial_seed() == torch.Generator().manual_seed(3 * 1_000_003 + 5 + 2).initial_seed()
