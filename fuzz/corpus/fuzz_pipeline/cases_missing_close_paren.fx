input x
y = x | lowpass(1 kHz
output y
