"""Chapter A4 (stress tests): its spec, claims, figures, explorable view and prose."""
