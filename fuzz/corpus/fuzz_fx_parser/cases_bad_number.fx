input x
output x | gain(1.2.3)
