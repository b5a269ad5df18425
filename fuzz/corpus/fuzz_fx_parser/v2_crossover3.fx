# A 3-band Linkwitz-Riley (LR4) crossover with a different saturation per band; the three
# bands, untouched, would sum back to an allpass of the input.
graph crossover3
import "std/crossover.fx"
input x : 2
low, mid, high = x | lr4_crossover3(200 Hz, 2.5 kHz)
output bands = [low, mid, high]
output y = (low | gain(2) | tanh() | gain(0.5)) + mid + 0.8 * high
