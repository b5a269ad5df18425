# RUN: fxc dump %s --emit ir-opt --target cuda --channels 1 --seconds 600 --threshold gpu_wavefront_max_steps=48
# The GPU chunk passes as a wavefront, asked for: off by default (measured no faster on an H200),
# taken for a chain of 2 to gpu_wavefront_max_steps steps; the reason says so.
graph long
input x

output x | butter(6, 80 Hz, highpass) | peaking(1 kHz, 1, 3 dB)
