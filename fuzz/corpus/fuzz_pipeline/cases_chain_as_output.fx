input x
output lowpass(1 kHz)
