"""Paper B's grading shared by its chapters: smallest effects of interest (sesoi), the rules
(rules) and the seed pairing the tests rely on, with the per-seed evidence (pairing)."""
