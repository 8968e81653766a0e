"""Chapter A1 (localization beyond the receptive field): its spec, claims, figures, tables and
explorable view."""
