input x
output x | tanh("«")
