# RUN: fxc dump %s --emit ir-opt --target cuda --channels 4096
# Strategies for a CUDA device: many channels get a thread each, a single channel is chunked
# in time.
graph gpu
input many
input one : 1

output wide   = many | butter(2, 1 kHz) | gain(0.5)
output narrow = one | butter(2, 1 kHz) | fir([0.5, 0.5])
