# A expander case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/expander_knee_*.npy (fs = 48 kHz).
graph expander_knee
input x : 2
output x | expander(-35 dB, 3, 2 ms, 40 ms, knee=10 dB, makeup=1 dB)
