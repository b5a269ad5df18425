# Dynamics D2 (bench/dynamics_vs_peers.py): a bank of 64 hard-knee compressors, one per channel,
# 64 ch x 60 s at 48 kHz. Faust: bench/peers/faust/dyn_bank.dsp, the same equations by hand.
graph dyn_bank
input x : 64
output x | compressor(-20 dB, 4, 10 ms, 100 ms)
