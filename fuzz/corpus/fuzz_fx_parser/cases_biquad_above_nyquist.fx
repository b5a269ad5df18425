input x
output x | peaking(25 kHz, 1.0, 3 dB)
