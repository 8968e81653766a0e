"""Chapter B2 (sparsity): its parameters (spec), its claims (the sparsity direction rows, which
chapter B4 reuses on other images and networks), figures and tables."""
