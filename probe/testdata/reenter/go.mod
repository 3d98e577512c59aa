module example.com/reenter

go 1.26
