# A two-way Linkwitz-Riley crossover at 2 kHz (two cascaded 2nd-order Butterworths per band),
# with the tweeter delayed to line up with the woofer's acoustic centre.
graph crossover
input x : 1

lr4_low  = butter(2, 2 kHz) | butter(2, 2 kHz)
lr4_high = butter(2, 2 kHz, highpass) | butter(2, 2 kHz, highpass)

output woofer  = x | lr4_low
output tweeter = x | lr4_high | delay(0.1 ms) | gain(-1.5 dB)
