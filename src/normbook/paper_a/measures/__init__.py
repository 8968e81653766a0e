"""Paper A's measures on trained networks: the localization detector, band slopes,
multi-hop excess, equivariance and the detector's calibration on simulated data."""
