graph dynamics_bad_params
input x : 2
a = x | compressor(-20 dB, 0.5, 5 ms, 50 ms)
b = x | compressor(-20 dB, 4, -5 ms, 50 ms, knee=-3 dB)
c = x | gate(-40 dB, 1 ms, 10 ms, range=6 dB)
d = x | expander(-40 dB, 2, 5 Hz, 50 ms)
e = x | limiter(-1 dB, 50 ms, lookahead=48)
f = x | envelope(1 ms, 20 ms, detector=average)
output a + b + c + d + e + f
