input x
output x | tf([1, 1], [0, 1])
