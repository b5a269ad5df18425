# A named chain applied twice in one path and once more on a delayed copy.
graph reused_chain
input x

tone = lowpass(2 kHz, 0.9) | gain(-6 dB)
output twice   = x | tone | tanh() | tone
output delayed = x | delay(7) | tone
