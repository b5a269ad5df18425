# Syntax, stage and name errors in one file are reported together.
graph broken
input x : 2
input side : 1
a = x | butter(0, 1 kHz)
b = x | lowpass(1 kHz
c = x | peakin(1 kHz, 1, 3 dB)
e = side | gain(1.2.3)
d = x + side
output a + b + c + dd
