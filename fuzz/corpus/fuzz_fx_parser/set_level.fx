#!set g=-3 dB
input x
g = 0 dB
output x | gain(g) | butter(3, 1 kHz)
