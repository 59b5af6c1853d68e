"""Reading ONNX models into the IR."""
