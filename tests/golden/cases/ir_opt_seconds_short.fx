# RUN: fxc dump %s --emit ir-opt --channels 1 --seconds 0.05
# REQUIRES: avx2
# One channel, 2400 samples (under chunked_min_samples): too short to chunk, so the sections
# run as a wavefront.
graph short
input x

output x | butter(4, 1 kHz) | highshelf(6 kHz, 3 dB)
