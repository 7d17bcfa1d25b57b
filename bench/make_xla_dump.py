#!/usr/bin/env python3
"""make_xla_dump.py DIR N PAD: writes a synthetic XLA dump of one module to DIR.

The module is a chain of N fusions over f32[256,256] values (each live while
it is written and while the next fusion reads it), packed by "XLA" in two
slots of a preallocated-temp allocation. Each HLO line and each entry of
`Used values` carries PAD bytes of metadata, as real dumps carry source
locations, so the files grow to hundreds of MB for a modest N: it measures
how `strata import xla` streams (time and peak memory), nothing else.
"""
import os
import sys

def main():
    out, n, pad = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, "module_0001.jit_chain.sm_9.0_gpu_after_optimizations")
    size = 256 * 256 * 4
    meta = "x" * pad
    with open(stem + "-buffer-assignment.txt", "w") as f:
        f.write("BufferAssignment:\n")
        f.write("allocation 0: size %d, parameter 0, shape |f32[256,256]| at ShapeIndex {}:\n" % size)
        f.write(" value: <0 p @0> (size=%d,offset=0): f32[256,256]{1,0}\n" % size)
        f.write("allocation 1: size %d, output shape is |f32[256,256]|, maybe-live-out:\n" % size)
        f.write(" value: <%d f%d @0> (size=%d,offset=0): f32[256,256]{1,0}\n" % (n, n, size))
        f.write("allocation 2: size %d, preallocated-temp:\n" % (2 * size))
        for i in range(1, n):
            f.write(" value: <%d f%d @0> (size=%d,offset=%d): f32[256,256]{1,0}\n"
                    % (i, i, size, (i % 2) * size))
        f.write("\nTotal bytes used: %d (big)\n\nUsed values:\n" % (4 * size))
        for i in range(1, n + 1):
            f.write("<%d f%d @0>\n positions:\n  f%d\n uses:\n  f%d, operand 0\n"
                    " from instruction: %%f%d = f32[256,256]{1,0} fusion(%%f%d), metadata={op_name=\"%s\"}\n"
                    % (i, i, i, i + 1, i, i - 1, meta))
        f.write("\n\nHloLiveRange (max %d):\n  InstructionSequence:\n    0:p\n" % (n + 1))
        for i in range(1, n + 1):
            f.write("    %d:f%d\n" % (i, i))
        f.write("  BufferLiveRange:\n    p{}:0-%d\n" % (n + 1))
        for i in range(1, n):
            f.write("    f%d{}:%d-%d\n" % (i, i, i + 1))
        f.write("    f%d{}:%d-%d\n" % (n, n, n + 1))
    with open(stem + ".txt", "w") as f:
        f.write("HloModule jit_chain, is_scheduled=true\n\n")
        f.write("fused (param_0: f32[256,256]) -> f32[256,256] {\n"
                "  param_0 = f32[256,256]{1,0} parameter(0)\n"
                "  ROOT tanh.0 = f32[256,256]{1,0} tanh(param_0)\n}\n\n")
        f.write("ENTRY main (p: f32[256,256]) -> f32[256,256] {\n")
        f.write("  p = f32[256,256]{1,0} parameter(0)\n  f0 = f32[256,256]{1,0} bitcast(p)\n")
        for i in range(1, n + 1):
            f.write("  %sf%d = f32[256,256]{1,0} fusion(f%d), kind=kLoop, calls=fused, metadata={op_name=\"%s\"}\n"
                    % ("ROOT " if i == n else "", i, i - 1, meta))
        f.write("}\n")

main()
