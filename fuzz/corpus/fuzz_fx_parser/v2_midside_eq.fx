# A mid/side EQ: brighten the sides, tighten the low end of the mid, back to left/right.
graph midside_eq
input x : 2
mid, side = x | ms_encode()
mid_eq = mid | highpass(40 Hz) | peaking(250 Hz, 1.0, -2 dB)
side_eq = side | highshelf(6 kHz, 3 dB) | highpass(150 Hz)
output [mid_eq, side_eq] | ms_decode()
