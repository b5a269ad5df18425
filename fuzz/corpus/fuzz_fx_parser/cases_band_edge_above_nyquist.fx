input x
output x | butter(2, [1 kHz, 24 kHz], bandpass)
