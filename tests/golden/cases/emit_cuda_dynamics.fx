# RUN: fxc dump %s --emit cuda --fs 48000
# The CUDA C++ of a chain with dynamics: one thread per channel (a nonlinear recursion), the
# envelope and gate counter in registers, the limiter's lookahead rings in the channel's state.
graph cuda_dynamics
input x : 2
output x | compressor(-20 dB, 4, 5 ms, 50 ms, knee=6 dB) | limiter(-1 dB, 50 ms, lookahead=0.5 ms) | envelope(1 ms, 10 ms, detector=rms)
