# A gate case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/gate_default_*.npy (fs = 48 kHz).
graph gate_default
input x : 2
output x | gate(-30 dB, 1 ms, 10 ms)
