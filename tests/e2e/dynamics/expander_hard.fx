# A expander case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/expander_hard_*.npy (fs = 48 kHz).
graph expander_hard
input x : 2
output x | expander(-34 dB, 2, 1 ms, 50 ms)
