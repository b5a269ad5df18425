# Dynamics D1 (bench/dynamics_vs_peers.py): a vocal chain on 8 channels, 8 ch x 60 s at 48 kHz:
# rumble filter, compressor with a 6 dB soft knee and 4 dB makeup, a 3-band EQ, and a limiter
# (no lookahead). Faust: bench/peers/faust/dyn_vocal.dsp, the same equations written by hand.
graph dyn_vocal
input x : 8
eq    = lowshelf(200 Hz, -2 dB) | peaking(3 kHz, 1.0, 3 dB) | highshelf(10 kHz, 1.5 dB)
voice = x | butter(2, 80 Hz, highpass) |
        compressor(-18 dB, 4, 5 ms, 80 ms, knee=6 dB, makeup=4 dB) | eq
output voice | limiter(-1 dB, 50 ms)
