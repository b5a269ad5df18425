input x
y x | tanh()
output x
