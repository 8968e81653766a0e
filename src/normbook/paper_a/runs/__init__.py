"""Paper A's orchestration: setups built from a chapter's parameters, which networks to
train or load, and summaries of the loaded cache entries (what the chapters ask for)."""
