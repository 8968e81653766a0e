"""Shared machinery of the book; independent of either paper."""
