module cgowork

go 1.16
