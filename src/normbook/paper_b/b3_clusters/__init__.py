"""Chapter B3 (clusters): its parameters (spec), its claims (class-based purity, the optimal-k
trajectory, DBI rows; chapter B4 reuses the purity row), figures, tables and explorable views."""
