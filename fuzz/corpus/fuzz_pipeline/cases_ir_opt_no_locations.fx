# RUN: fxc dump %s --emit ir-opt --no-locations --fs 44100
# REQUIRES: avx2
# The optimized IR without loc(...) and origins(...).
graph no_loc
input x : 2

output y = x | highpass(40 Hz) | lowshelf(120 Hz, 2 dB) | gain(-1 dB) | clip(-1, 1)
