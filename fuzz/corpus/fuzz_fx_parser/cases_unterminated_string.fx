input x
output x | butter(4, 1 kHz, "highpass)
