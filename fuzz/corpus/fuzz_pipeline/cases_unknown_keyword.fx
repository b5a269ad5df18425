input x
output x | firwin(101, cutof=1 kHz)
