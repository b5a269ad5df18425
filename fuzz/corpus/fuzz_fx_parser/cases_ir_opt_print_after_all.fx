# RUN: fxc dump %s --emit ir-opt --print-after-all
# REQUIRES: avx2
# The IR after each pass: a dead branch goes, the duplicate branch merges, gains fold, the IIR
# and FIR runs fuse, chains form and get strategies.
graph passes
input x : 1

unused = x | butter(2, 1 kHz)
a = x | butter(2, 1 kHz) | gain(2) | lowpass(5 kHz)
b = x | butter(2, 1 kHz) | fir([0.5, 0.5]) | fir([0.5, -0.5]) | gain(1)
output a + b
