"""Chapter B4 (stress tests): its parameters (spec), the BN x learning-rate 2 x 2 (factorial),
the accuracy-matched comparison (matching), their planned compute (plan), its claims (reusing
chapters B2's and B3's direction rows), figures, tables and prose (text)."""
