"""Torch implementations of the host fallbacks, one file per op family (fallback/<family>.py names them).

The converter never imports these modules: fallback/source.py copies the functions a program needs into
it.  So each `host_*` function may use only torch, builtins and the module-level functions of its own file,
takes the op's inputs as torch tensors in their ONNX dtypes (None for an omitted optional input) and its
attributes as keywords, and returns its outputs (a tuple when there are several) in their ONNX dtypes.
"""
