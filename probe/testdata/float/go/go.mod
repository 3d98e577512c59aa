module example.com/float

go 1.21
