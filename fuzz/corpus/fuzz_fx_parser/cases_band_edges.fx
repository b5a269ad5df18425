input x : 1
a = x | butter(4, 1 kHz, bandpass)
b = x | butter(4, [1 kHz, 2 kHz])
c = x | cheby1(4, 1 dB, [2 kHz, 1 kHz], bandstop)
output a + b + c
