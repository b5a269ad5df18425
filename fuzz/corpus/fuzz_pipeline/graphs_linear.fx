# A linear graph for fxc freqz.
graph linear
input x : 1
output y = x | butter(4, 1 kHz) | peaking(3 kHz, 2, 6 dB)
