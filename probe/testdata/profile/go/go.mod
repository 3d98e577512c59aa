module cpu

go 1.21
