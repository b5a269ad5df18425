input x : 1
input y : 1
output x * y
