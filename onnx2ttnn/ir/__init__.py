"""The compiler's intermediate representation: graph, layouts, memory configs, devices, ttnn op table."""
