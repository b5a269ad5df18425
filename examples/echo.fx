# A stereo echo: repeats every 250 ms, each half as loud and darker than the one before.
# The name y is used before its binding: that closes a feedback loop through the delay.
graph echo
input x : 2
time = 250 ms in [10 ms, 1 s]
feedback = 0.5 in [0, 0.95]
y = x + feedback * (y | delay(time) | lowpass(3 kHz))
output 0.7 * y
