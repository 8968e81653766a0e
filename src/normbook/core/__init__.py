"""Shared machinery of the book. Its modules import neither paper's package; the build finds
the chapters' specs through the registry :mod:`normbook.chapters` (imported when needed)."""
