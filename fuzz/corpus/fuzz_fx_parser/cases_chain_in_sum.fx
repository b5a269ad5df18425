input dry
eq = lowpass(8 kHz) | gain(0.5)
output dry + eq
