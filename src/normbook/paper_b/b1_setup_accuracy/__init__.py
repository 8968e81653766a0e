"""Chapter B1 (setup and accuracy): its parameters (spec), its claims (the accuracy rows and
Table 1), figures and tables."""
