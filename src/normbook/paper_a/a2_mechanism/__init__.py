"""Chapter A2 (the mechanism: Fig. 2, PackNorm and the multi-hop reach): its spec, claims,
figures and tables."""
