"""The functions a traceable program adds for --trace (ir/traceable.py TracePlan): the forward cut in three,
input uploads (forward_inputs, and host_inputs for ttnn.copy_host_to_device_tensor), the device body a trace
captures (forward_device) and the output reads (read_outputs).  Rendered through the emitter
(emit/python.PythonEmitter) like the forward; the main() of emit/program_main.py replays them."""
from __future__ import annotations

from onnx2ttnn.emit.writer import CodeWriter


def traced_parts(em, w: CodeWriter, inputs: dict) -> None:
    """The forward cut in three for --trace (ir/traceable.py): input uploads, the device body a trace
    captures, output reads."""
    plan = em.trace
    signature = ", ".join(inputs)
    uploads = ", ".join(f"{ascii(em.name(n.outputs[0]))}: {em.name(n.outputs[0])}" for n in plan.uploads)
    w.line(f"def forward_inputs(device, *, {signature}):" if signature else "def forward_inputs(device):")
    with w.indent():
        w.line('"""The inputs uploaded into new device buffers in the forward\'s input placement')
        w.line('(--trace: the persistent buffers each new input is copied into)."""')
        em.statements(w, plan.uploads)
        w.line(f"return {{{uploads}}}")
    w.line()
    w.line()
    w.line(f"def host_inputs(*, {signature}):" if signature else "def host_inputs():")
    with w.indent():
        w.line('"""The inputs as host tensors of their device buffers\' dtype and layout')
        w.line('(for ttnn.copy_host_to_device_tensor)."""')
        for node in plan.uploads:
            w.line(f"{em.name(node.outputs[0])} = {em.call(node, host=True)}")
        w.line(f"return {{{uploads}}}")
    w.line()
    w.line()
    device_names = ", ".join(em.name(n.outputs[0]) for n in plan.uploads)
    read = list(dict.fromkeys(em.name(n.inputs[0]) for n in plan.downloads if n.op == "to_torch"))
    w.line(f"def forward_device(device, params, *, {device_names}):" if device_names
           else "def forward_device(device, params):")
    with w.indent():
        w.line('"""The forward between the input uploads and the output reads: device ops only, what a trace '
               'captures.')
        w.line("Returns the device tensors the outputs are read from (their buffers, like the inputs', stay "
               'allocated)."""')
        em.statements(w, plan.body)
        w.line("return {" + ", ".join(f"{ascii(name)}: {name}" for name in read) + "}")
    w.line()
    w.line()
    w.line("def read_outputs(device_outputs):")
    with w.indent():
        w.line('"""{ONNX output name: torch tensor} read from forward_device\'s results (host reads)."""')
        for name in read:
            w.line(f"{name} = device_outputs[{ascii(name)}]")
        em.statements(w, plan.downloads)
        outs = ", ".join(f"{ascii(t.name)}: {em.name(t)}" for t in em.module.graph.outputs)
        w.line(f"return {{{outs}}}")
    w.line()
    w.line()
