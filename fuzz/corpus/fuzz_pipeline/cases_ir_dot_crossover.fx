# RUN: fxc dump %s --emit ir --format dot --fs 44100
# A crossover with two named outputs, as Graphviz at 44.1 kHz (0.1 ms is 4.41 samples: 4).
graph crossover
input x : 1

lr4_low  = butter(2, 2 kHz) | butter(2, 2 kHz)
lr4_high = butter(2, 2 kHz, highpass) | butter(2, 2 kHz, highpass)

output woofer  = x | lr4_low
output tweeter = x | lr4_high | delay(0.1 ms) | gain(-1.5 dB)
