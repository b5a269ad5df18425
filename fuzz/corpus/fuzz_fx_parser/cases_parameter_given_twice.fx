input x
output x | butter(4, 1 kHz, Wn=2 kHz)
