"""The run-time framework every experiment uses: chapter parameters, the experiment cache,
seeding, devices, worker pools, progress lines and the provenance of a recorded run. The lowest
layer: it imports nothing else of normbook."""
