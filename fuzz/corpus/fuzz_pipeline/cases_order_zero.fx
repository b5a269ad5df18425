input x
output x | butter(0, 1 kHz)
