"""Chapter A5 (reach beyond one hop): its spec, claims, figures, tables and prose (text) and
explorable view."""
