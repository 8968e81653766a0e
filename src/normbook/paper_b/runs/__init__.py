"""Paper B's orchestration: which classifiers to train or load (classify), the factorial
and matched designs of B4, and the null clusters."""
