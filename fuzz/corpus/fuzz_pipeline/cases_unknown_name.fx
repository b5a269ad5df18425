input x
smooth = x | lowpass(2 kHz)
output smoth | tanh()
