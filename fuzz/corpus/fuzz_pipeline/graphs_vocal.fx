# The vocal chain of the language reference: rumble filter, presence boost, soft limiter, and
# a dry/wet mix with a 5 ms dry delay (220.5 samples at 44.1 kHz, which rounds up to 221).
graph vocal
input x : 2

clean = x | butter(4, 80 Hz, highpass)
tone  = clean | peaking(3 kHz, 1.0, 4 dB) | highshelf(10 kHz, -2 dB)
wet   = tone | tanh() | gain(-3 dB)
output 0.7 * wet + 0.3 * (x | delay(5 ms))
