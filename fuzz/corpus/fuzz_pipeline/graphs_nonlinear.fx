# tanh makes the graph nonlinear: fxc freqz must refuse it.
graph nonlinear
input x : 1
output y = x | butter(2, 1 kHz) | tanh()
