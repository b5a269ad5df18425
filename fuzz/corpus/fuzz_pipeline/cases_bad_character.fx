input x : 1
output x | tanh() @ 2
