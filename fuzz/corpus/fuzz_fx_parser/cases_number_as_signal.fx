input x : 1
output 0.5
output 0.5 | tanh()
output x + 1
output x | 0.5
