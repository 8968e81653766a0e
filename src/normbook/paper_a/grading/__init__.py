"""Paper A's grading shared by its chapters: smallest effects of interest (sesoi), the null
networks (nulls), late-training rules (late) and the rules several chapters' claims use
(rules: positive controls, checks, "localizes beyond R")."""
