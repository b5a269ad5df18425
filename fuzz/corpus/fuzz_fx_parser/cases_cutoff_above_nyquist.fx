input x
output x | butter(4, 30 kHz)
