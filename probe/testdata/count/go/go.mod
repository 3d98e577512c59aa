module example.com/count

go 1.26
