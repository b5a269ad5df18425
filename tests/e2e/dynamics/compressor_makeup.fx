# A compressor case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/compressor_makeup_*.npy (fs = 48 kHz).
graph compressor_makeup
input x : 2
output x | compressor(-24 dB, 2.5, 2 ms, 100 ms, makeup=6 dB)
