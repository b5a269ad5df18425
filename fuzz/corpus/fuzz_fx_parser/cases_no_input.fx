eq = lowpass(1 kHz)
output eq
