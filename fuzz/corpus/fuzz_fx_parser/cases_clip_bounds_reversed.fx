input x
output x | clip(1, -1)
