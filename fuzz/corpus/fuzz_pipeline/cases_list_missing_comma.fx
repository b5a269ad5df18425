input x
output x | fir([0.25 0.5, 0.25])
