input x
output 0.5 * (x | tanh()
