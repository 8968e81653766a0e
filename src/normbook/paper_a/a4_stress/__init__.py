"""Chapter A4 (stress tests): its figures and its claims."""
