# A compressor case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/compressor_knee_*.npy (fs = 48 kHz).
graph compressor_knee
input x : 2
output x | compressor(-20 dB, 4, 5 ms, 50 ms, knee=6 dB, makeup=2 dB)
