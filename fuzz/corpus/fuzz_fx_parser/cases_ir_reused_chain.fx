# RUN: fxc dump %s --emit ir --fs 48000
# A named chain used twice in one path and on a second input: each use is its own nodes.
graph reused
input x : 1
input z : 1

tone = lowpass(2 kHz, 0.9) | gain(0.5)
output a = x | tone | tanh() | tone
output b = z | (0.25 * tone)
