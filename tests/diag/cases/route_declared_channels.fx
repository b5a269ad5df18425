# Routing stages that do not fit a declared channel count: reported as the user's mistake,
# as they are when the count comes from the input file.
input x : 1
input y : 3
output a = x | ms_encode()
output b = y | swap()
output c = y[0] | pan(0) | ms_decode()
input z : 3
output d = z | pan(0)
