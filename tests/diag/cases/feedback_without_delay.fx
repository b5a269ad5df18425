# A loop through a filter and a gain but no delay: no sample of y could be computed first.
input x : 2
y = x + 0.5 * (y | lowpass(3 kHz))
output y
