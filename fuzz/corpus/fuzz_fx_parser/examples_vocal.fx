# A vocal chain: rumble filter, presence boost, soft limiter, and a dry/wet mix.
graph vocal
input x : 2

clean = x | butter(4, 80 Hz, highpass)
tone  = clean | peaking(3 kHz, 1.0, 4 dB) | highshelf(10 kHz, -2 dB)
wet   = tone | tanh() | gain(-3 dB)
output 0.7 * wet + 0.3 * (x | delay(5 ms))
