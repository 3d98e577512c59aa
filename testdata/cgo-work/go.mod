module cgowork

go 1.21
