# RUN: fxc dump %s --emit ir-opt --passes infer-types,fuse-everything
# EXIT: 1
# An unknown pass name is reported.
input x : 1
output x | gain(2)
