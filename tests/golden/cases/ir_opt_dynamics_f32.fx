# RUN: fxc dump %s --emit ir-opt --fs 48000 --dtype f32
# REQUIRES: avx2
# A float32 vocal chain with dynamics: the 80 Hz highpass needs float64 state, so
# split-precision gives it a chain of its own, and the compressor, EQ and limiter run in float32,
# where dynamics use vector log2 and exp2 (in float64 they would call the C library per lane).
graph dynamics_f32
input x : 8
voice = x | butter(2, 80 Hz, highpass) | compressor(-18 dB, 4, 5 ms, 80 ms, knee=6 dB, makeup=4 dB)
output voice | lowshelf(200 Hz, -2 dB) | peaking(3 kHz, 1.0, 3 dB) | limiter(-1 dB, 50 ms)
