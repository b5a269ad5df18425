# A FIR as long as a small room's impulse response: 24001 taps, half a second at 48 kHz. On the
# GPU a partitioned FFT convolution (fir_partitioned: 12 partitions of 2048 taps in float32, 24
# of 1024 in float64); on the CPU overlap-save with one FFT of 131072 points.
graph long_fir
input x
output x | firwin(24001, 1000 Hz)
