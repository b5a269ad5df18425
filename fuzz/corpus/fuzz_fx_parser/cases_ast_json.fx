# RUN: fxc dump %s --emit ast --format json
# The AST as JSON: a named output, a keyword argument, a list and a string.
input x : 2
hp = x | butter(2, 100 Hz, btype="highpass")
output y = 0.5 * hp - x | firwin(5, [1 kHz, 2 kHz], window=hann)
