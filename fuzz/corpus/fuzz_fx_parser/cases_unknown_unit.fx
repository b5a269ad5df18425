input x
low = x | lowpass(3 khz)
high = x | highpass(3kz)
output low + high
