"""Paper B's networks and cached computation: every module of paper B that a cache key
covers besides the data readers (the classifiers, their training, representation metrics and
the cached analyses), and nothing else."""
