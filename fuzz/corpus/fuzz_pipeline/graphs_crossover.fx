# A two-way Linkwitz-Riley crossover at 2 kHz: a lowpass and a highpass output, the tweeter
# delayed by 0.1 ms (4.41 samples at 44.1 kHz, rounded to 4) and attenuated.
graph crossover
input x : 1

lr4_low  = butter(2, 2 kHz) | butter(2, 2 kHz)
lr4_high = butter(2, 2 kHz, highpass) | butter(2, 2 kHz, highpass)

output woofer  = x | lr4_low
output tweeter = x | lr4_high | delay(0.1 ms) | gain(-1.5 dB)
