input x
output x | firwin(100, 1 kHz, pass_zero=false)
