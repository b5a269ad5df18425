input x
output x | delay(1e)
