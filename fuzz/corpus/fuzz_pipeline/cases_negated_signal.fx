input x
output -x
