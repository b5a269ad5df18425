# One chain through every Audio EQ Cookbook biquad, a gain in dB and a clip.
graph single_chain
input x : 2

output y = x | highpass(40 Hz) | lowshelf(150 Hz, 3 dB, 0.8) | peaking(1 kHz, 1.5, -4 dB) |
           highshelf(f0=9 kHz, gain=2.5 dB, q=0.6) | lowpass(16 kHz, 0.9) | notch(50 Hz, 8) |
           allpass(700 Hz, 0.5) | bandpass(q=0.3, f0=2 kHz) | gain(6 dB) | clip(-0.5, 0.5)
