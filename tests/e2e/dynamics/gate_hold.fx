# A gate case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/gate_hold_*.npy (fs = 48 kHz).
graph gate_hold
input x : 2
output x | gate(-36 dB, 0.5 ms, 20 ms, hold=5 ms, range=-60 dB)
