# A envelope case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes
# this file and its expected outputs, tests/data/dynamics/envelope_rms_*.npy (fs = 48 kHz).
graph envelope_rms
input x : 2
output x | envelope(5 ms, 50 ms, detector=rms)
