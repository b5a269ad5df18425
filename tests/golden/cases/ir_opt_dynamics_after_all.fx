# RUN: fxc dump %s --emit ir-opt --fs 48000 --print-after-all
# REQUIRES: avx2
# A vocal chain with dynamics: the compressor's and limiter's times become samples at design,
# and the highpass, compressor, EQ and limiter fuse into one kernel, run in channel lanes (a
# nonlinear recursion: no chunked scan). The gain before the compressor folds into the highpass
# before it, never through the compressor.
graph dynamics_vocal
input x : 2
voice = x | butter(2, 80 Hz, highpass) | gain(2) | compressor(-18 dB, 4, 5 ms, 80 ms, knee=6 dB, makeup=4 dB)
eq = voice | lowshelf(200 Hz, -2 dB) | peaking(3 kHz, 1.0, 3 dB)
output eq | limiter(-1 dB, 50 ms, lookahead=1 ms) | gate(-60 dB, 1 ms, 100 ms, hold=20 ms)
