"""Turning the final IR into files: the Python program, the weights sidecar, the annotated IR dump."""
