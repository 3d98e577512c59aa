module connect

go 1.22
