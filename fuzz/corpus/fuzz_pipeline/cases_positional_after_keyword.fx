input x
output x | butter(4, btype=highpass, 1 kHz)
