input x
output x | peakin(1 kHz, 1.0, 3 dB)
