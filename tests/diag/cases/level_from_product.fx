# A product with a level in dB is a gain (1 * -20 dB is 0.1). A level parameter, where a plain
# number means dB, refuses it instead of reading +0.1 dB; gain() takes it as the gain it is.
input x : 1
t = 1 * -20 dB
g = 2 * 6 dB
output x | compressor(t, 4, 1 ms, 10 ms) | peaking(1 kHz, 1, g) | gain(g)
