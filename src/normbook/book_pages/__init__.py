"""The pages that read the whole book: the introduction's findings (intro), the Methods
page (methods), the claims ledger (ledger) and the exercise registry (exercises)."""
