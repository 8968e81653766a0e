"""The build and site machinery: which chapters exist (chapters), executing them (build,
execution, chapter_jobs, sweep), their stamps and timings, the Jupyter Book site and its checks.
The top of the library: it imports every layer below it, and nothing imports it but the tools."""
