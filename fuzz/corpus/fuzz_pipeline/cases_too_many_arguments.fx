input x : 1
a = x | lowpass(1 kHz, 0.7, 3 dB)
b = x | tanh(1)
output a + b
