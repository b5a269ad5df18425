# A 30 kHz cutoff lies above the Nyquist frequency of a 44.1 kHz file (22.05 kHz).
graph too_high
input x : 1
output y = x | lowpass(30 kHz)
