# RUN: fxc dump %s --emit ir-opt --passes infer-types,design-filters,fold-gains,fuse-iir
# Only the named passes run: gains fold and IIR sections fuse, but no chains form and no
# strategy is chosen.
graph some_passes
input x : 1

output x | butter(2, 1 kHz) | gain(0.5) | peaking(2 kHz, 1, 3 dB) | gain(2) | delay(4)
