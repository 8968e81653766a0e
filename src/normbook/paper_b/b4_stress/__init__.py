"""Chapter B4 (stress tests): its prose (text) and its claims."""
