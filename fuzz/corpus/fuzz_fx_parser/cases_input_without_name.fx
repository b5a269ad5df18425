input : 2
output x
