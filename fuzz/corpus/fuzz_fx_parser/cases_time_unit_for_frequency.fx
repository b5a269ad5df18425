input x
output x | lowpass(5 ms)
