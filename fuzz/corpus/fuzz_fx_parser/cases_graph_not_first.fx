input x
graph late
output x
