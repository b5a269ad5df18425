# A vocal chain with dynamics: rumble filter, a gate for the noise between phrases, a 4:1
# compressor with a soft knee, a presence EQ, and a limiter that looks 1 ms ahead.
graph vocal_dynamics
input x : 2
threshold = -18 dB in [-40 dB, 0 dB]
voice = x | butter(2, 80 Hz, highpass) | gate(-50 dB, 1 ms, 150 ms, hold=30 ms, range=-30 dB)
squeezed = voice | compressor(threshold, 4, 5 ms, 80 ms, knee=6 dB, makeup=4 dB)
eq = squeezed | lowshelf(200 Hz, -2 dB) | peaking(3 kHz, 1.0, 3 dB) | highshelf(10 kHz, 1.5 dB)
output eq | limiter(-1 dB, 50 ms, lookahead=1 ms)
