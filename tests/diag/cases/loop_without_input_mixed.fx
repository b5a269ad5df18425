# A loop with nothing fed into it, mixed into a signal that an input feeds: an error at the
# loop (before 2026-11-29 --target ref crashed, and the kernels asked for a channel count the
# input declared).
input x : 1
y = 0.5 * (y | delay(1))
output y + x
