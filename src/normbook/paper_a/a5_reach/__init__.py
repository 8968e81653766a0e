"""Chapter A5 (reach beyond one hop): its pages (figures, tables, prose) and its claims."""
