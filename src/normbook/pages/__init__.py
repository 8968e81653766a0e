"""Page helpers the chapters call: figure theme and legends, number formatting, interactive
views and the run report. Imports the grading core and the run-time framework, never a paper."""
