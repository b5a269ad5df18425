# RUN: fxc dump %s --emit bytecode
# EXIT: 2
# An unknown --emit is a command-line error.
input x : 1
output x
