# RUN: fxc dump %s --emit ir --fs 48000 --channels 2
# The vocal chain built, bound to 48 kHz and two channels (the input declares no count), and
# designed: the 5 ms delay is exactly 240 samples.
graph vocal
input x

clean = x | butter(4, 80 Hz, highpass)
tone  = clean | peaking(3 kHz, 1.0, 4 dB) | highshelf(10 kHz, -2 dB)
wet   = tone | tanh() | gain(-3 dB)
output 0.7 * wet + 0.3 * (x | delay(5 ms))
