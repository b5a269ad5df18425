input x
y = x + eq
eq = lowpass(1 kHz) | delay(10)
output y
