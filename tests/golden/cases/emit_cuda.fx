# RUN: fxc dump %s --emit cuda --channels 2 --dtype f32
# The CUDA C++ of a linear chain (the chunked scan's three passes) and a non-linear one (one thread per
# channel), and the sum that mixes them.
graph cuda_mix
input x
bright = x | butter(2, 100 Hz, highpass) | peaking(3 kHz, 1.0, 3 dB)
warm = x | lowshelf(200 Hz, 4 dB) | tanh()
output 0.5 * bright + 0.5 * warm
