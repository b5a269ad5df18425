# RUN: fxc dump %s --emit ir-opt --dtype f32 --channels 16 --fs 96000
# REQUIRES: avx2
# Sixteen float32 channels fill the 8-lane vectors: each lane runs one channel.
graph lanes
input x

output x | butter(6, 20 kHz) | gain(0.5)
