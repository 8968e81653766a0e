"""Paper B's grading shared by its chapters: smallest effects of interest (sesoi), rules
(rules) and the paper's own numbers (paper_values)."""
