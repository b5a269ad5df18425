# Jezar's Freeverb on a stereo signal, from the standard library, mixed with the dry signal.
graph reverb
import "std/reverb.fx"
input x : 2
wet = x | freeverb(room = 0.8, damp = 0.3)
output 0.8 * x + 0.5 * wet
