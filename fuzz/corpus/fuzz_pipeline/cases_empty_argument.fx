input x
output x | butter(4, , highpass)
