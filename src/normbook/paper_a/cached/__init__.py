"""Paper A's networks and cached computation: every module of paper A that a cache key
covers (cache_keys lists which key covers which), and nothing else. Editing a module here
retrains; editing anything outside it re-executes chapters from the cache."""
