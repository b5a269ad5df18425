# RUN: fxc dump %s --emit ir-opt --target cuda --channels 1 --seconds 600 --threshold gpu_chunk_length=8192
# One channel, ten minutes, on a CUDA device: the IIR chain is chunked in time, with the chunk
# length given on the command line; the reason names the expected length.
graph long
input x

output x | butter(4, 1 kHz) | highshelf(6 kHz, 3 dB)
