"""Paper A's grading shared by its chapters: smallest effects of interest (sesoi), the
null networks (nulls), late-training rules (late), the paper's own numbers (paper_values) and
the recorded paper-scale run (recorded)."""
