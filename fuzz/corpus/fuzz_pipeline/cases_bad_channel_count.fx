input x : 0
input y : 2.5
output x + y
