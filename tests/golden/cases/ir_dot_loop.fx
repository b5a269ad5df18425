# RUN: fxc dump %s --emit ir-opt --format dot --fs 48000 --channels 2
# REQUIRES: avx2
# A loop in Graphviz: the feedback edge is dashed and drawn against the flow.
graph dot_loop
input x
y = x + 0.5 * (y | lowpass(3 kHz) | delay(10 ms))
output y
