# A value in the wrong unit is one error: the checks of the value read in its place
# (rp > 0, increasing band edges) do not add a second one.
input x : 1
a = x | cheby1(2, 1 Hz, 1 kHz)
b = x | ellip(4, 1 Hz, 2 s, 1 kHz)
c = x | butter(2, [1 kHz, 2 s], bandpass)
d = x | firwin(31, [3 kHz, 1 s, 2 kHz], pass_zero=false)
output a + b + c + d
