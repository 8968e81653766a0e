"""Chapter A3 (which normalizations localize: GroupNorm and BatchNorm): its spec, claims,
figures, tables and explorable view."""
