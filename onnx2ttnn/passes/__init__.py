"""The compiler passes, one per module; pipeline.py lists them in order."""
