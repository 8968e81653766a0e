"""The calibration page: how long A1's networks must train at each profile (budget), its spec,
figure and table."""
