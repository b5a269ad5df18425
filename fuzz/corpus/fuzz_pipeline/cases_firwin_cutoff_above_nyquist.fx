input x
output x | firwin(101, [1 kHz, 30 kHz])
