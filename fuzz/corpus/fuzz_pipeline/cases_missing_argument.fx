input x : 1
a = x | butter(4)
b = x | peaking(1 kHz)
c = x | ellip(6, 1 dB)
output a + b + c
