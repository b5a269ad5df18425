input x
output x |
