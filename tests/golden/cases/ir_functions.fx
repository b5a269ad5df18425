# RUN: fxc dump %s --emit ir --fs 48000 --channels 2
# Functions expand where they are called: two calls, two copies with their own state; the
# standard library's crossover returns its bands.
graph functions
import "std/crossover.fx"
input x
fn tone(f, g = 3 dB) {
  return in | highshelf(f, g)
}
low, high = x | lr4_crossover2(500 Hz)
output (low | tone(2 kHz)) + (high | tone(8 kHz, -2 dB))
