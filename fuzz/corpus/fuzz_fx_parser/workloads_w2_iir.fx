# W2 (performance.md): TorchFX's IIR benchmark chain. {1, 8} ch x {5, 60, 300} s at 44.1 kHz.
graph w2_iir
input x
output x | butter(2, 1000 Hz, highpass) | butter(2, 5000 Hz) | cheby1(2, 0.1 dB, 1500 Hz, highpass) | cheby1(2, 0.1 dB, 1800 Hz)
